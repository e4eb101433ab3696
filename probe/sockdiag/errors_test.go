package sockdiag

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
)

func TestNotAvailableError(t *testing.T) {
	err := fmt.Errorf("side A: %w", &NotAvailableError{What: "socket listings", Reason: notAvailableReason("darwin")})
	if !errors.Is(err, ErrNotAvailable) {
		t.Fatal("not matched by ErrNotAvailable")
	}
	var na *NotAvailableError
	if !errors.As(err, &na) || na.Error() != "socket listings n/a: needs Linux sock_diag: macOS cannot list a namespace's sockets (nbdscope reads processes' descriptors there, with proc_pidfdinfo)" {
		t.Fatalf("message %q", err)
	}
	if errors.Is(err, ErrGone) {
		t.Error("n/a taken for gone")
	}
	if got := notAvailableReason("freebsd"); got != "needs Linux sock_diag and /proc, not available on freebsd" {
		t.Errorf("freebsd: %q", got)
	}
}

func TestKernelErrorIs(t *testing.T) {
	for errno, gone := range map[syscall.Errno]bool{syscall.ENOENT: true, syscall.ESTALE: true, syscall.EPERM: false, syscall.EINVAL: false} {
		err := fmt.Errorf("lookup: %w", &KernelError{Errno: errno, Op: "request"})
		if errors.Is(err, ErrGone) != gone || !errors.Is(err, errno) {
			t.Errorf("%v: gone %v, is errno %v", errno, errors.Is(err, ErrGone), errors.Is(err, errno))
		}
	}
}
