package sockdiag

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrGone is the error of a socket or process that no longer exists: it was
// closed (or exited) between the moment it was found and the lookup, or its
// inode now names a newer socket (the cookie no longer matches). Test with
// errors.Is; it is an expected event, not a failure of the tool.
var ErrGone = errors.New("gone")

// ErrMalformed is wrapped by every error about a netlink reply that cannot
// be parsed: truncated, lengths that do not add up, a structure too short.
var ErrMalformed = errors.New("malformed sock_diag reply")

// ErrNotAvailable is matched (errors.Is) by every *NotAvailableError.
var ErrNotAvailable = errors.New("not available")

// NotAvailableError says a figure cannot be had on this system, and why, in
// words a user can be shown next to the n/a.
type NotAvailableError struct {
	What   string // what could not be had, e.g. "socket fill"
	Reason string // why, and where possible what would lift it
}

func (e *NotAvailableError) Error() string { return e.What + " n/a: " + e.Reason }

// Is makes errors.Is(err, ErrNotAvailable) true.
func (e *NotAvailableError) Is(target error) bool { return target == ErrNotAvailable }

// KernelError is an error code the kernel returned in a netlink reply
// (NLMSG_ERROR, or a negative code in NLMSG_DONE).
type KernelError struct {
	Errno syscall.Errno
	Op    string // "request" or "dump"
}

func (e *KernelError) Error() string {
	return fmt.Sprintf("sock_diag %s: kernel says %v", e.Op, e.Errno)
}

// Unwrap gives the errno, so errors.Is(err, syscall.EPERM) works.
func (e *KernelError) Unwrap() error { return e.Errno }

// Is reports ENOENT (no such socket) and ESTALE (its cookie changed: the
// inode is another socket's now) as ErrGone.
func (e *KernelError) Is(target error) bool {
	return target == ErrGone && (e.Errno == syscall.ENOENT || e.Errno == syscall.ESTALE)
}

// notAvailableReason says why sock_diag figures cannot be had on goos.
func notAvailableReason(goos string) string {
	if goos == "darwin" {
		return "needs Linux sock_diag: macOS cannot list a namespace's sockets (nbdscope reads processes' descriptors there, with proc_pidfdinfo)"
	}
	return "needs Linux sock_diag and /proc, not available on " + goos
}
