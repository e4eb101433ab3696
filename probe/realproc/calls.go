// Package realproc measures and tunes a real process nbdscope did not
// write (an exec side's client, a real server): its socket calls counted
// exactly (probe/syscount) on the sockets it holds (probe/sockdiag).
// engine/child's roles and the exec sweep use it alike.
package realproc

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"nbdscope/nbd"
	"nbdscope/probe/sockdiag"
	"nbdscope/probe/syscount"
)

// Calls counts a real process's socket calls, the figures our own
// processes count at the call (nbd.IOStats), for a process we did not
// write: an exec side's client, a real server. It counts with
// probe/syscount over the process and everything it starts.
//
// Where the bpf programs may be loaded it counts at the kernel's socket
// layer (syscount.Options.Sockets): every one of the ten calls that
// moved data through a socket of the process or its children, read on a
// socket too, and nothing else; an eventfd's read is never seen, which
// is why it costs a real process far less than counting per call (qemu
// makes two or three eventfd calls for each socket call). Elsewhere (an
// older kernel, per thread) it counts per call, and what it counts as a
// socket call is:
//   - recvfrom, recvmsg, recvmmsg, sendto, sendmsg, sendmmsg on any fd:
//     they work on sockets only (qemu-img, qemu-nbd, nbdkit and libnbd
//     clients move NBD data with them);
//   - read, readv, write, writev only on the sockets of the process and
//     its children (sockdiag.TreeSockets), each process's own where the
//     counter counts per process, rescanned every rescanEvery, so the
//     eventfd and file reads of an event loop are not taken for socket
//     calls. A connection's read/write calls between its accept or connect
//     and the next rescan are missed; the msg calls never are.
//
// A call counts as a call when it did not fail with EAGAIN, as our own
// counters count; EAGAIN is the range's lower bound, exact for the socket
// calls above (syscount.Count.EAGAIN).
type Calls struct {
	pid  int
	mu   sync.Mutex
	c    *syscount.Counter
	last nbd.IOStats
	stop chan struct{}
	done chan struct{}
}

// rescanEvery is how often the process's sockets are looked up again: a
// role's own loop, at most 50 ms (issue 23).
const rescanEvery = 50 * time.Millisecond

// OpenCalls starts counting pid's socket calls from now (from its
// exec when pid is held, clientrun.StartHeld). The error is a
// *syscount.Unavailable when the system does not allow counting.
func OpenCalls(pid int) (*Calls, error) {
	mech, err := countingMechanism()
	if err != nil {
		return nil, err
	}
	k := &Calls{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	if mech != syscount.PerThread && os.Getenv(CountingEnv) != "bpf-calls" {
		if k.c, err = syscount.Open(pid, syscount.Options{Children: true, Sockets: true, Mechanism: syscount.PerProcess}); err == nil {
			close(k.done) // no sockets to follow: the socket layer sees them all
			return k, nil
		}
	}
	// Per call, the socket-only calls are counted on any fd, without an
	// fd-filtered counter each: the same counts, and (per thread) 6 of 30
	// counters fewer for the kernel to switch with each thread
	// (bench/README.md, "Counting cost").
	if k.c, err = syscount.Open(pid, syscount.Options{Children: true, AnyFD: socketOnlyCalls, Mechanism: mech}); err != nil {
		return nil, err
	}
	go k.watch()
	return k, nil
}

// watch follows the process's sockets until close.
func (k *Calls) watch() {
	defer close(k.done)
	t := time.NewTicker(rescanEvery)
	defer t.Stop()
	for {
		k.rescan()
		select {
		case <-k.stop:
			return
		case <-t.C:
		}
	}
}

// rescan points the fd-filtered counters at the sockets of the process
// and of everything it started, each in its own process where the
// counter can tell them apart (syscount.Counter.SetProcessFDs). A
// process that has gone keeps its counts.
func (k *Calls) rescan() {
	socks, err := sockdiag.TreeSockets(k.pid)
	if err != nil {
		return
	}
	byPID := map[int][]int{}
	for _, s := range socks {
		byPID[s.PID] = append(byPID[s.PID], s.FD)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.c != nil {
		k.c.SetProcessFDs(byPID)
	}
}

// Read is the socket calls counted since the open. A failed read (the
// process gone in a way the kernel no longer answers for) keeps the last
// reading, so counters never go back.
func (k *Calls) Read() nbd.IOStats {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.c == nil {
		return k.last
	}
	c, err := k.c.Read()
	if err == nil {
		k.last = MaxIO(k.last, ioStatsOf(c))
	}
	return k.last
}

// Close stops counting and returns the last counts; Read then gives the last counts.
func (k *Calls) Close() nbd.IOStats {
	if k == nil {
		return nbd.IOStats{}
	}
	io := k.Read()
	close(k.stop) // the watch, if any, ends
	<-k.done
	k.mu.Lock()
	c := k.c
	k.c = nil
	k.mu.Unlock()
	// Per thread, closing takes the kernel 0.5-0.8 s (each tracepoint
	// counter waits for every CPU to leave it): an exec side's next run,
	// and the polls meanwhile, need not wait for that. The counts are read.
	go c.Close()
	return io
}

// socketOnlyCalls are the calls that work on sockets only.
var socketOnlyCalls = []syscount.Syscall{syscount.Recvfrom, syscount.Recvmsg, syscount.Recvmmsg, syscount.Sendto, syscount.Sendmsg, syscount.Sendmmsg}

func socketOnly(s syscount.Syscall) bool { return slices.Contains(socketOnlyCalls, s) }

// ioStatsOf turns counts into the socket-call counters of nbd.IOStats (no
// byte counts: the payload is the controller's to know).
func ioStatsOf(c syscount.Counts) nbd.IOStats {
	var io nbd.IOStats
	for _, d := range []syscount.Dir{syscount.Recv, syscount.Send} {
		n := c.Socket[d] // counted at the socket layer: every kind at once
		eagain := min(n.EAGAIN().Min, n.Calls)
		if d == syscount.Recv {
			io.RecvCalls, io.RecvEAGAIN = n.Calls-eagain, eagain
		} else {
			io.SendCalls, io.SendEAGAIN = n.Calls-eagain, eagain
		}
	}
	for s := range syscount.NumSyscalls {
		n := c.Of[s]
		if socketOnly(s) {
			n.Calls = n.Any
		}
		eagain := min(n.EAGAIN().Min, n.Calls)
		if s.Dir() == syscount.Recv {
			io.RecvCalls += n.Calls - eagain
			io.RecvEAGAIN += eagain
		} else {
			io.SendCalls += n.Calls - eagain
			io.SendEAGAIN += eagain
		}
	}
	return io
}

// MaxIO is the field-wise maximum: a reading that never goes back.
func MaxIO(a, b nbd.IOStats) nbd.IOStats {
	return nbd.IOStats{RecvCalls: max(a.RecvCalls, b.RecvCalls), RecvEAGAIN: max(a.RecvEAGAIN, b.RecvEAGAIN),
		SendCalls: max(a.SendCalls, b.SendCalls), SendEAGAIN: max(a.SendEAGAIN, b.SendEAGAIN)}
}

// NA is why a real process's calls are not counted, and the fix, from
// the error of OpenCalls or Probe (a *syscount.Unavailable names both).
func NA(err error) (why, fix string) {
	var u *syscount.Unavailable
	if errors.As(err, &u) {
		return u.Why, u.Fix
	}
	return err.Error(), ""
}

// CountingEnv is the environment variable that chooses how real
// processes' calls are counted, or turns counting off, to measure what
// it costs (bench/countcost.sh alternates runs):
//   - unset or "on": per process (bpf) where allowed, at the socket
//     layer where the kernel has its tracepoints, else per thread;
//   - "bpf" or "perf": only that way (syscount.Mechanism), n/a where it
//     is not allowed;
//   - "bpf-calls": per process, on each call's syscall tracepoints, not
//     at the socket layer (to measure the two: bench/countcost.sh);
//   - "off": Probe refuses, so every caller shows those figures as n/a,
//     with that reason, and opens no counter.
const CountingEnv = "NBDSCOPE_SYSCOUNT"

// countingMechanism is the mechanism CountingEnv asks for.
func countingMechanism() (syscount.Mechanism, error) {
	switch v := os.Getenv(CountingEnv); v {
	case "", "on":
		return syscount.Auto, nil
	case "bpf", "bpf-calls":
		return syscount.PerProcess, nil
	case "perf":
		return syscount.PerThread, nil
	case "off":
		return syscount.Auto, &syscount.Unavailable{Reason: syscount.ReasonOff,
			Why: "counting is turned off (" + CountingEnv + "=off)", Fix: "unset " + CountingEnv}
	default:
		return syscount.Auto, fmt.Errorf("%s=%q: want on, bpf, bpf-calls, perf or off (counting is off until it is one of them)", CountingEnv, v)
	}
}

// probes and bpfLoads count this process's probes of counting, for
// Probes.
var probes, bpfLoads atomic.Int64

// Probes is how often this process has probed counting (syscount.Probe:
// a counter opened and closed) and tried the bpf programs
// (syscount.WhyNotPerProcess: loaded and unloaded), which doctor does
// once each.
func Probes() (probed, bpfTried int64) { return probes.Load(), bpfLoads.Load() }

func probeSyscount() error {
	probes.Add(1)
	return syscount.Probe()
}

// tryBPF loads the bpf programs OpenCalls would count with and says
// where they count: at the socket layer; else on the syscall tracepoints,
// and why not at the socket layer; or why not at all. The per-call
// programs are loaded only when the socket layer's are not used: each
// set costs every process on the machine while it is loaded.
func tryBPF() (where, whyNot string) {
	bpfLoads.Add(1)
	notSockets := CountingEnv + "=bpf-calls"
	if os.Getenv(CountingEnv) != "bpf-calls" {
		if notSockets = syscount.WhyNotSockets(); notSockets == "" {
			return "at the socket layer", ""
		}
		notSockets = "not at the socket layer: " + notSockets
	}
	if why := syscount.WhyNotPerProcess(); why != "" {
		return "", why
	}
	return "on the syscall tracepoints; " + notSockets, ""
}

// Probe tells whether this process may count system calls here: nil, or
// a *syscount.Unavailable with the reason and the fix. Callers probe
// before OpenCalls, so CountingEnv is honoured here. Where the bpf
// programs are not asked for by name, it does not try them: a role's
// OpenCalls finds out.
func Probe() error {
	_, _, err := probe(false)
	return err
}

// ProbeMechanism is Probe, and how real processes' calls are counted
// here ("per process (bpf …)" or "per thread (perf …)") with why not per
// process when per thread, from one probe: doctor tells both, and each
// probe opens a counter, and tries loading the bpf programs.
func ProbeMechanism() (how, whyNotPerProcess string, err error) { return probe(true) }

// probe probes counting once; how and why are known only when describe
// is set, or the bpf programs are asked for.
func probe(describe bool) (how, whyNotPerProcess string, err error) {
	mech, err := countingMechanism()
	if err != nil {
		return "", "", err
	}
	if err := probeSyscount(); err != nil {
		return "", "", err
	}
	if mech == syscount.PerThread {
		return "per thread (perf counters, " + CountingEnv + "=perf)", "", nil
	}
	if mech != syscount.PerProcess && !describe {
		return "", "", nil
	}
	where, why := tryBPF()
	switch {
	case why == "":
		return "per process (bpf programs " + where + ")", "", nil
	case mech == syscount.PerProcess:
		return "", "", &syscount.Unavailable{Reason: syscount.ReasonBlocked, Why: CountingEnv + "=bpf, and " + why, Fix: "unset " + CountingEnv}
	default:
		return "per thread (perf counters)", why, nil
	}
}
