package clientrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"nbdscope/platform"
)

// Result is one run of a client command.
type Result struct {
	Seconds float64 `json:"seconds"` // wall time from start to exit
	// UserS and SysS are the CPU seconds of the client and of every
	// descendant it waited for (wait4's rusage, as time(1) reports).
	UserS float64 `json:"user_s"`
	SysS  float64 `json:"sys_s"`
	// Nvcsw and Nivcsw are its voluntary and involuntary context
	// switches (the same rusage): wake-ups.
	Nvcsw  int64 `json:"nvcsw"`
	Nivcsw int64 `json:"nivcsw"`
	// MinFlt is its minor page faults (the same rusage): a client that
	// allocates a fresh buffer per request faults its pages in every
	// time, and where a fault is dear (a VM) that can set its pace.
	MinFlt int64 `json:"minflt"`
}

// Failure is a run that did not exit 0: how it ended and the end of what
// it wrote on stderr.
type Failure struct {
	Argv   []string
	Status string // "exit status 1", "signal: killed"
	Stderr string // the last lines
}

func (f *Failure) Error() string {
	words := make([]string, len(f.Argv))
	for i, a := range f.Argv {
		words[i] = a
		if a == "" || strings.ContainsAny(a, " \t'\"\\$&;|<>*?()") {
			words[i] = shellQuote(a)
		}
	}
	s := fmt.Sprintf("%s: %s", strings.Join(words, " "), f.Status)
	if f.Stderr != "" {
		s += "\n" + f.Stderr
	}
	return s
}

// Timeout bounds one run: a client that hangs is killed then, with its
// process group.
const Timeout = 10 * time.Minute

// stderrKeep is how much of the client's stderr is kept for a failure.
const stderrKeep = 4 << 10

// Run starts argv in a process group of its own with stdin from
// /dev/null and stdout discarded, waits for it and measures it. A cancelled
// ctx, or Timeout, kills the whole group. Whatever the client left behind
// in its group is killed when it exits. With cpus, the client and all it
// starts run held to those CPUs from the first instruction (a placement).
func Run(ctx context.Context, argv []string, cpus []int) (Result, error) {
	return RunNotify(ctx, argv, cpus, nil)
}

// RunNotify is Run that calls started, if set, with the client's pid as
// soon as it runs: for readings taken from outside while it runs (the
// fill of its sockets).
func RunNotify(ctx context.Context, argv []string, cpus []int, started func(pid int)) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	tail := &tailBuffer{max: stderrKeep}
	cmd.Stderr = tail
	start := time.Now()
	if err := platform.StartOn(cpus, cmd.Start); err != nil {
		return Result{}, &Failure{Argv: argv, Status: "did not start: " + err.Error()}
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	err := cmd.Wait()
	wall := time.Since(start)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // stragglers; ESRCH when none
	if err != nil {
		status := err.Error()
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.Canceled) {
			status = fmt.Sprintf("killed after %v (did not finish)", Timeout)
		}
		return Result{}, &Failure{Argv: argv, Status: status, Stderr: tail.lastLines(10)}
	}
	return measure(cmd.ProcessState, wall), nil
}

// measure reads the run's figures from its wait4 rusage.
func measure(ps *os.ProcessState, wall time.Duration) Result {
	r := Result{Seconds: wall.Seconds(), UserS: ps.UserTime().Seconds(), SysS: ps.SystemTime().Seconds()}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		r.Nvcsw, r.Nivcsw, r.MinFlt = int64(ru.Nvcsw), int64(ru.Nivcsw), int64(ru.Minflt)
	}
	return r
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(t.b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// Supports reports whether tool lists option in its --help (nbdcopy's
// --blkhash came in libnbd 1.20): a probe, so a preset can fall back.
func Supports(tool, option string) bool {
	out, _ := exec.Command(tool, "--help").CombinedOutput()
	return strings.Contains(string(out), option)
}

// Process is a client run started with Start: its pid (the leader of its
// own process group) for live readings, and Wait for its end.
type Process struct {
	argv  []string
	cmd   *exec.Cmd
	start time.Time
	tail  *tailBuffer
}

// Start starts argv like Run does, without waiting.
func Start(argv []string) (*Process, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	tail := &tailBuffer{max: stderrKeep}
	cmd.Stderr = tail
	p := &Process{argv: argv, cmd: cmd, tail: tail, start: time.Now()}
	if err := cmd.Start(); err != nil {
		return nil, &Failure{Argv: argv, Status: "did not start: " + err.Error()}
	}
	return p, nil
}

// Pid is the client's process id, also its process group's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the client's whole process group.
func (p *Process) Signal(sig syscall.Signal) error { return syscall.Kill(-p.cmd.Process.Pid, sig) }

// Wait waits for the client's end and measures it; whatever it left in
// its group is killed.
func (p *Process) Wait() (Result, error) {
	err := p.cmd.Wait()
	wall := time.Since(p.start)
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	if err != nil {
		return Result{}, &Failure{Argv: p.argv, Status: err.Error(), Stderr: p.tail.lastLines(10)}
	}
	return measure(p.cmd.ProcessState, wall), nil
}
