package sockdiag

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"nbdscope/internal/testbin"
)

// heldHelperEnv makes the test binary try one read through a holder (the
// PID, fd and inode in the environment) and print how it went, for a test
// that runs it as another user.
const heldHelperEnv = "SOCKDIAG_HELD_HELPER"

func TestMain(m *testing.M) {
	testbin.Roles(m, heldHelperEnv, map[string]func() int{"1": tryHeldHelper})
}

func tryHeldHelper() int {
	var h FD
	var err error
	for _, v := range []struct {
		name string
		dst  *int
	}{{"HELD_PID", &h.PID}, {"HELD_FD", &h.FD}} {
		if *v.dst, err = strconv.Atoi(os.Getenv(v.name)); err != nil {
			fmt.Println("bad", v.name, err)
			return 1
		}
	}
	ino, err := strconv.ParseUint(os.Getenv("HELD_INODE"), 10, 32)
	if err != nil {
		fmt.Println("bad HELD_INODE", err)
		return 1
	}
	h.Inode = Inode(ino)
	r := newPidfdReader()
	defer r.Close()
	_, err = r.heldMem(h)
	var refusal *heldRefusal
	switch {
	case errors.As(err, &refusal):
		fmt.Println("refused", refusal.PID, refusal.Err)
	case err != nil:
		fmt.Println("other", err)
	default:
		fmt.Println("read")
	}
	return 0
}

// TestHeldRefusedForAnotherUser: as nobody, reading a socket of this
// (root) process through a duplicate is refused, and says so (the sampler
// then reads it by netlink); root reads its own.
func TestHeldRefusedForAnotherUser(t *testing.T) {
	bin := testbin.WorldExecutableCopy(t, "sockdiag")
	p := newSocketPair(t)
	h := p.holder(0, true)
	out := testbin.RunAsNobody(t, bin, nil, heldHelperEnv, "1", "HELD_PID="+strconv.Itoa(h.PID),
		"HELD_FD="+strconv.Itoa(h.FD), "HELD_INODE="+strconv.Itoa(int(h.Inode)))
	want := fmt.Sprintf("refused %d %v", h.PID, syscall.EPERM)
	if got := strings.TrimSpace(out); got != want {
		t.Errorf("as nobody, on root's socket: %q, want %q", got, want)
	}
	r := newPidfdReader()
	defer r.Close()
	if _, err := r.heldMem(h); err != nil {
		t.Errorf("root on its own socket: %v", err)
	}
}
