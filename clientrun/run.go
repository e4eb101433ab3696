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
	"nbdscope/shellword"
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
	s := fmt.Sprintf("%s: %s", shellword.Join(f.Argv), f.Status)
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
	return runWith(ctx, argv, cpus, nil, nil)
}

// RunHeld is Run with the client held before its exec until attach(pid)
// has returned, as StartHeld does; a nil attach holds nothing. The time
// is measured from the release.
func RunHeld(ctx context.Context, argv []string, cpus []int, attach func(pid int)) (Result, error) {
	return runWith(ctx, argv, cpus, attach, nil)
}

// RunNotify is Run that calls started, if set, with the client's pid as
// soon as it runs: for readings taken from outside while it runs (the
// fill of its sockets).
func RunNotify(ctx context.Context, argv []string, cpus []int, started func(pid int)) (Result, error) {
	return runWith(ctx, argv, cpus, nil, started)
}

// runWith runs argv, held for attach (when set) before its exec, and
// tells started (when set) its pid once it runs.
func runWith(ctx context.Context, argv []string, cpus []int, attach, started func(pid int)) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	var h *hold
	name, args := argv[0], argv[1:]
	if attach != nil {
		var err error
		if h, err = newHold(argv); err != nil {
			return Result{}, err
		}
		defer h.w.Close()
		name, args = "/bin/sh", append([]string{"-c", holdScript}, argv...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = heldAttrs() // its own group, killed should this process die (the janitor kills the rest)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	tail := &tailBuffer{max: stderrKeep}
	stderr, err := pipeStderr(cmd)
	if err != nil {
		return Result{}, &Failure{Argv: argv, Status: "did not start: " + err.Error()}
	}
	if h != nil {
		cmd.ExtraFiles = []*os.File{h.r}
	}
	err = platform.StartOn(cpus, cmd.Start)
	if h != nil {
		h.r.Close()
	}
	stderr.started(tail, err == nil)
	if err != nil {
		return Result{}, &Failure{Argv: argv, Status: "did not start: " + err.Error()}
	}
	Guard(cmd.Process.Pid)
	defer stderr.finish()          // its last lines, once nothing holds the pipe
	defer Release(cmd.Process.Pid) // after the group is killed and its leader reaped
	if h != nil {
		attach(cmd.Process.Pid)
		if err := h.release(); err != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			return Result{}, &Failure{Argv: argv, Status: "did not start: " + err.Error()}
		}
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	start := time.Now()
	err = cmd.Wait()
	wall := time.Since(start)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // stragglers; ESRCH when none
	if err != nil {
		Release(cmd.Process.Pid) // what escaped is killed, so the pipe closes
		stderr.finish()
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
	argv   []string
	cmd    *exec.Cmd
	start  time.Time
	tail   *tailBuffer
	stderr *stderrPipe
}

// Start starts argv like Run does, without waiting.
func Start(argv []string) (*Process, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = heldAttrs()
	tail := &tailBuffer{max: stderrKeep}
	stderr, err := pipeStderr(cmd)
	if err != nil {
		return nil, &Failure{Argv: argv, Status: "did not start: " + err.Error()}
	}
	p := &Process{argv: argv, cmd: cmd, tail: tail, stderr: stderr, start: time.Now()}
	err = cmd.Start()
	stderr.started(tail, err == nil)
	if err != nil {
		return nil, &Failure{Argv: argv, Status: "did not start: " + err.Error()}
	}
	Guard(cmd.Process.Pid)
	return p, nil
}

// holdScript holds a started client before its exec: the shell waits for
// one line on fd 3, closes fd 3 and execs the client in its own place (same
// pid, same process group). If fd 3 closes without a line, it exits 1.
const holdScript = `read x <&3 && exec 3<&- "$0" "$@"`

// StartHeld starts argv like Start, but holds the process before it execs
// argv until attach(pid) has returned. Whatever attach opens on that pid
// and is inherited across exec (perf counters with inherit, as
// probe/syscount opens them) then sees the client from its first
// instruction, with nothing missed between the exec and the attach. The
// hold is a /bin/sh in the client's place that reads one line from a pipe
// and execs; it makes no socket calls, so counts of those are the client's
// alone.
func StartHeld(argv []string, attach func(pid int)) (*Process, error) {
	h, err := newHold(argv)
	if err != nil {
		return nil, err
	}
	defer h.w.Close()
	cmd := exec.Command("/bin/sh", append([]string{"-c", holdScript}, argv...)...)
	cmd.SysProcAttr = heldAttrs()
	cmd.ExtraFiles = []*os.File{h.r}
	tail := &tailBuffer{max: stderrKeep}
	stderr, err := pipeStderr(cmd)
	if err != nil {
		return nil, &Failure{Argv: argv, Status: "did not start: " + err.Error()}
	}
	p := &Process{argv: argv, cmd: cmd, tail: tail, stderr: stderr}
	err = cmd.Start()
	h.r.Close()
	stderr.started(tail, err == nil)
	if err != nil {
		return nil, &Failure{Argv: argv, Status: "did not start: " + err.Error()}
	}
	Guard(cmd.Process.Pid) // before it runs anything of its own
	attach(cmd.Process.Pid)
	p.start = time.Now()
	if err := h.release(); err != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		Release(cmd.Process.Pid)
		stderr.finish()
		return nil, &Failure{Argv: argv, Status: "did not start: " + err.Error()}
	}
	return p, nil
}

// hold is the pipe a held client waits on (holdScript reads fd 3).
type hold struct{ r, w *os.File }

// newHold checks that the client can be found (so a missing program
// fails at the start, as without a hold) and makes the pipe.
func newHold(argv []string) (*hold, error) {
	if _, err := exec.LookPath(argv[0]); err != nil {
		return nil, &Failure{Argv: argv, Status: "did not start: " + err.Error()}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, &Failure{Argv: argv, Status: "did not start: " + err.Error()}
	}
	return &hold{r: r, w: w}, nil
}

// release lets the held client exec.
func (h *hold) release() error {
	if _, err := h.w.Write([]byte("go\n")); err != nil {
		return fmt.Errorf("releasing the held process: %w", err)
	}
	return nil
}

// Pid is the client's process id, also its process group's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the client's whole process group.
func (p *Process) Signal(sig syscall.Signal) error { return syscall.Kill(-p.cmd.Process.Pid, sig) }

// StderrTail is the last lines the process wrote on stderr so far.
func (p *Process) StderrTail() string { return p.tail.lastLines(10) }

// Wait waits for the client's end and measures it; whatever it left in
// its group is killed, and the group leaves the janitor's care.
func (p *Process) Wait() (Result, error) {
	err := p.cmd.Wait()
	wall := time.Since(p.start)
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	Release(p.cmd.Process.Pid) // and what escaped from it
	p.stderr.finish()
	if err != nil {
		return Result{}, &Failure{Argv: p.argv, Status: err.Error(), Stderr: p.tail.lastLines(10)}
	}
	return measure(p.cmd.ProcessState, wall), nil
}
