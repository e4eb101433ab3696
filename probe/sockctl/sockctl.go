// Package sockctl reads and changes the socket buffers of another
// process's sockets while it runs, without its help: on Linux (5.6+) it
// takes a duplicate of the process's fd with pidfd_open + pidfd_getfd. A
// duplicate is the same socket, so setsockopt on it changes the process's
// own socket, and getsockopt on it reads the value the socket really has.
// Elsewhere, or where the kernel's rules refuse it, every call returns an
// *Error naming the reason and, where one exists, the command that lifts
// it; a caller refuses the change with that message, never silently.
package sockctl

import "fmt"

// Option is the buffer read or changed.
type Option int

// The two buffers.
const (
	SendBuf Option = iota // SO_SNDBUF
	RecvBuf               // SO_RCVBUF
)

func (o Option) String() string {
	if o == RecvBuf {
		return "SO_RCVBUF"
	}
	return "SO_SNDBUF"
}

// Reason is why a buffer cannot be read or changed.
type Reason int

// The reasons.
const (
	// ReasonUnsupported: this OS has no way to act on another process's
	// socket (macOS).
	ReasonUnsupported Reason = iota + 1
	// ReasonOldKernel: no pidfd_open (Linux 5.3) or pidfd_getfd (5.6).
	ReasonOldKernel
	// ReasonOtherUser: the process runs as another user (or group), and
	// this one lacks CAP_SYS_PTRACE.
	ReasonOtherUser
	// ReasonNotDumpable: the process runs as this user but is not
	// dumpable (it changed credentials, or asked not to be).
	ReasonNotDumpable
	// ReasonYama: kernel.yama.ptrace_scope forbids it (1: only the
	// process's ancestors; 2: only CAP_SYS_PTRACE; 3: nobody).
	ReasonYama
	// ReasonDenied: refused for none of the reasons above: a security
	// module (AppArmor, SELinux) or a seccomp filter.
	ReasonDenied
	// ReasonGone: the process has exited.
	ReasonGone
	// ReasonNoFD: the process has no such fd (the connection closed).
	ReasonNoFD
	// ReasonNotSocket: the fd is not a socket.
	ReasonNotSocket
)

var reasonNames = map[Reason]string{
	ReasonUnsupported: "unsupported",
	ReasonOldKernel:   "old-kernel",
	ReasonOtherUser:   "other-user",
	ReasonNotDumpable: "not-dumpable",
	ReasonYama:        "yama-ptrace-scope",
	ReasonDenied:      "denied",
	ReasonGone:        "gone",
	ReasonNoFD:        "no-such-fd",
	ReasonNotSocket:   "not-a-socket",
}

// String is a short stable name ("yama-ptrace-scope") for logs and JSON.
func (r Reason) String() string {
	if s, ok := reasonNames[r]; ok {
		return s
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Error says why a process's buffer cannot be read or changed.
type Error struct {
	PID int
	// FD is the process's fd, or -1 when the refusal is for the process.
	FD     int
	Reason Reason
	// Why is the reason in a sentence, with the facts read.
	Why string
	// Fix is the command that lifts it; empty where none does.
	Fix string
	// Err is the system's own error, when there was one.
	Err error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("cannot change the socket buffers of process %d", e.PID)
	if e.FD >= 0 {
		s = fmt.Sprintf("cannot change the buffer of fd %d of process %d", e.FD, e.PID)
	}
	s += ": " + e.Why
	if e.Fix != "" {
		s += " (fix: " + e.Fix + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }
