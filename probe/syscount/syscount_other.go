//go:build !linux

package syscount

import (
	"runtime"
)

// unsupported is the one answer off Linux.
func unsupported() error {
	why := "this OS (" + runtime.GOOS + ") has no syscall tracepoints a process can count for another"
	if runtime.GOOS == "darwin" {
		why = "macOS has no syscall tracepoints a process can count for another: it keeps only a per-process total of all system calls (proc_pidinfo PROC_PIDTASKINFO, pti_syscalls_unix), with no split by call, direction or result"
	}
	return &Unavailable{Reason: ReasonUnsupported, Why: why}
}

// Probe tells whether this process may count system calls: never here.
func Probe() error { return unsupported() }

// Counter counts one process's calls (Linux only).
type Counter struct{}

// Open starts counting process pid's calls: never here.
func Open(pid int, opt Options) (*Counter, error) { return nil, unsupported() }

// Read returns the counts since Open.
func (c *Counter) Read() (Counts, error) { return Counts{}, unsupported() }

// SetFDs changes the fds whose calls are counted.
func (c *Counter) SetFDs(fds []int) error { return unsupported() }

// FDs are the fds counted.
func (c *Counter) FDs() []int { return nil }

// Missing lists the calls this kernel has no tracepoints for.
func (c *Counter) Missing() []Syscall { return nil }

// Children tells whether processes the target starts are counted too.
func (c *Counter) Children() bool { return false }

// Exited tells whether the process has exited.
func (c *Counter) Exited() bool { return false }

// Close releases every counter.
func (c *Counter) Close() error { return nil }

// Mechanism is how the counter counts (Linux only).
func (c *Counter) Mechanism() Mechanism { return Auto }

// WhyPerThread is why an Auto counter counts per thread.
func (c *Counter) WhyPerThread() string { return "" }

// WhyNotPerProcess is why counting per process (bpf) is not possible
// here: always, off Linux.
func WhyNotPerProcess() string { return unsupported().Error() }

// SetProcessFDs changes the fds counted, per process of a tree.
func (c *Counter) SetProcessFDs(byPID map[int][]int) error { return unsupported() }

// WhyNotSockets is why socket calls cannot be counted at the socket layer.
func WhyNotSockets() string { return unsupported().Error() }

// RefusedLog is the verifier's log of a refused counting program: none here.
func RefusedLog() string { return "" }
