//go:build !linux

package sockctl

import "runtime"

func unsupported(pid int) error {
	why := "no way to change another process's buffer on " + runtime.GOOS
	if runtime.GOOS == "darwin" {
		why = "no way to change another process's buffer on macOS (it has no pidfd_getfd; proc_pidfdinfo reads a socket's buffers, for the same user only, but nothing sets them)"
	}
	return &Error{PID: pid, FD: -1, Reason: ReasonUnsupported, Why: why}
}

// Process is a handle on another process (Linux only).
type Process struct{ pid int }

// Open takes hold of process pid: never here.
func Open(pid int) (*Process, error) { return nil, unsupported(pid) }

// PID is the process's id.
func (p *Process) PID() int { return p.pid }

// Get reads a buffer of the process's fd: never here.
func (p *Process) Get(fd int, o Option) (int, error) { return 0, unsupported(p.pid) }

// Set changes a buffer of the process's fd: never here.
func (p *Process) Set(fd int, o Option, bytes int) (int, error) { return 0, unsupported(p.pid) }

// Close releases the process.
func (p *Process) Close() error { return nil }
