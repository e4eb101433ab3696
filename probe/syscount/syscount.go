// Package syscount counts another process's system calls exactly: the
// calls that receive and send data, and the ones among them that failed
// with EAGAIN, on chosen file descriptors or on all of them.
//
// On Linux it counts on the kernel's syscall tracepoints
// (syscalls:sys_enter_recvmsg and so on), in one of two ways (Mechanism):
//
//   - PerProcess, where it may (root, or CAP_BPF and CAP_PERFMON): small
//     BPF programs on those tracepoints add one to the counted process's
//     counters in a map, keyed by process (tgid), with the processes it
//     starts entered as they are created. It costs every caller of those
//     calls on the machine a map lookup, and the counted process nothing
//     at a context switch.
//   - PerThread, elsewhere: perf_event_open counters in counting mode, one
//     group per thread, inherited by the threads it starts. The kernel
//     moves a thread's counters with it at each context switch (about
//     0.35 µs per counter per switch on the development VM), so a process
//     that waits often, as a client at a small send buffer does, pays
//     10-25% more CPU (see Counter, the benchmarks, and bench/README.md,
//     "Counting cost").
//
// A caller that wants a process's socket calls alone, per direction, and
// not per call on chosen fds (realproc) asks for Options.Sockets: BPF
// programs at the kernel's socket layer (sock:sock_recv_length and
// sock_send_length), which see only socket I/O, so the process's eventfd
// and file reads and writes cost it nothing (bpfsock_linux.go).
//
// Nothing is sampled or traced either way: the figures are exact (they
// match `strace -f -c` and `perf stat -e syscalls:…` call for call, and
// the tests check both ways against each other and against strace).
//
// It needs tracefs mounted and readable (for the tracepoint ids), and
// root, CAP_PERFMON, or, for one's own processes, kernel.
// perf_event_paranoid ≤ 2. Elsewhere, or where the kernel or the
// permissions do not allow it, Probe and Open return an *Unavailable that
// names the reason and the one command that lifts it: a caller shows the
// figure as n/a with that reason, never as 0.
//
// What is counted, and what is not:
//   - every thread of the process, those alive when the Counter is opened
//     and every thread started later (perf's inherit: a new thread takes a
//     copy of its creator's counters, and an exited thread's counts are
//     kept);
//   - with Options.Children, also every process it starts after Open, like
//     `strace -f`; processes it had started before are not;
//   - calls made by 32-bit (compat) programs on a 64-bit kernel are not
//     seen by the syscall tracepoints at all.
package syscount

import "fmt"

// Syscall is one of the system calls counted.
type Syscall int

// The calls that move data through a socket (or any fd), per direction.
const (
	Read Syscall = iota
	Readv
	Recvfrom
	Recvmsg
	Recvmmsg
	Write
	Writev
	Sendto
	Sendmsg
	Sendmmsg
	// NumSyscalls is the number of calls counted; Counts.Of is indexed by
	// Syscall.
	NumSyscalls
)

var syscallNames = [NumSyscalls]string{
	"read", "readv", "recvfrom", "recvmsg", "recvmmsg",
	"write", "writev", "sendto", "sendmsg", "sendmmsg",
}

// String is the call's name as strace and tracefs spell it ("recvmsg").
func (s Syscall) String() string { return nameOf(s, "Syscall", syscallNames[:]) }

// nameOf is the name names gives v, or what(v) where it gives none, so
// that a value out of range still prints as itself ("Syscall(10)").
func nameOf[T ~int](v T, what string, names []string) string {
	if v >= 0 && int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", what, int(v))
}

// Dir is the direction of a call: data in (receive) or out (send).
type Dir int

// The two directions.
const (
	Recv Dir = iota
	Send
)

func (d Dir) String() string {
	if d == Recv {
		return "receive"
	}
	return "send"
}

// Dir tells which way the call moves data.
func (s Syscall) Dir() Dir {
	if s >= Write {
		return Send
	}
	return Recv
}

// Options choose what a Counter counts.
type Options struct {
	// AllFDs counts the calls on every fd; FDs is then ignored.
	AllFDs bool
	// FDs are the file descriptors whose calls are counted (a process's
	// data sockets); Counter.SetFDs changes them as connections come and
	// go. Calls on other fds still count in Count.Any.
	FDs []int
	// Calls are the calls counted; nil: all ten. Each call counted costs
	// the process 2 or 3 counters per thread, switched at each of its
	// context switches (see Counter), so a caller that knows which calls
	// a program uses can count only those.
	Calls []Syscall
	// AnyFD are calls counted on every fd although FDs are set: their
	// Count.Calls is Count.Any, and they have no fd-filtered counter (a
	// counter fewer per thread each). For calls that work on sockets only
	// (recvmsg, sendto, …) when FDs are a process's sockets, this is the
	// same count, cheaper.
	AnyFD []Syscall
	// Children also counts the processes the target starts after Open
	// (and theirs), as `strace -f` does; with FDs, their calls on the same
	// fd numbers, whatever those are in them. Without it only the target's
	// own threads are counted (Linux 5.13+; an older kernel cannot tell
	// threads from children and counts both, which Counter.Children
	// reports).
	Children bool
	// Mechanism chooses how to count; the zero value, Auto, counts per
	// process with BPF where it may and per thread with perf elsewhere.
	Mechanism Mechanism
	// Sockets counts the process's socket calls instead, per direction
	// (Counts.Socket): each call that moved data through one of its
	// sockets, or tried to, whichever of the ten calls made it (read on a
	// socket counts, read on an eventfd does not), and only those. It
	// counts per process only (bpf), at the kernel's socket layer, and
	// needs no fds: Open fails where that cannot be loaded, for the
	// caller to count per call instead. See bpfsock_linux.go.
	Sockets bool
}

// Mechanism is how a Counter counts. Both count the same calls exactly;
// they differ in what they cost the counted process and what they need.
type Mechanism int

const (
	// Auto is PerProcess where it can be loaded, else PerThread.
	Auto Mechanism = iota
	// PerProcess: BPF programs on the syscall tracepoints count a call
	// when its caller's process is counted. They cost every caller of
	// those calls on the machine a lookup (tens of nanoseconds) and
	// nothing at a context switch. Needs CAP_BPF and CAP_PERFMON (root).
	PerProcess
	// PerThread: perf counters on each thread, which the kernel switches
	// with the thread at each context switch (about 0.35 µs per counter
	// per switch on the development VM: 10-25% more CPU for a process
	// that waits often). Needs only perf_event_paranoid ≤ 2 for one's
	// own processes.
	PerThread
)

var mechanismNames = [...]string{Auto: "auto", PerProcess: "bpf", PerThread: "perf"}

// String is "bpf", "perf" or "auto".
func (m Mechanism) String() string { return nameOf(m, "Mechanism", mechanismNames[:]) }

// ParseMechanism reads "auto", "bpf" or "perf".
func ParseMechanism(s string) (Mechanism, error) {
	for m, name := range mechanismNames {
		if s == name {
			return Mechanism(m), nil
		}
	}
	return Auto, fmt.Errorf("counting mechanism %q: want auto, bpf or perf", s)
}

// Count is what one system call did, as three raw counters that only
// grow. They are kept raw, not as the EAGAIN range they give, so that the
// difference of two readings (Counts.Sub) still gives a true range.
type Count struct {
	// Calls is how many calls were entered on the counted fds (on any fd
	// when Options.FDs is empty).
	Calls uint64
	// Any is how many calls were entered on any fd.
	Any uint64
	// EAGAINAny is how many calls, on any fd, failed with EAGAIN.
	EAGAINAny uint64
}

// EAGAIN is how many of the calls on the counted fds failed with EAGAIN.
//
// The kernel's sys_exit_* tracepoints have the return value but not the
// fd, so a filter can pick out the calls that failed with EAGAIN but not
// which fd they were on. Two facts bound the answer exactly from the
// counters a Counter has anyway: no more calls on the counted fds can
// fail than were made on them (Calls), and no more can have failed
// elsewhere than were made elsewhere (Any - Calls). So the range is exact
// (Min == Max) whenever a process makes this call only on the counted
// fds, or never on them (qemu-nbd and qemu-img use recvmsg/sendmsg only on
// their sockets and read/write only on eventfds and files), and it is
// wide only by the calls made elsewhere when they share a call.
//
// Pairing each exit with its entry would be exact in every case, but in
// counting mode the kernel keeps no per-call state to pair with; doing it
// would mean sampling every call into a ring buffer or loading a BPF
// program, both far costlier and needing more privilege than counting.
func (c Count) EAGAIN() Range {
	elsewhere := uint64(0)
	if c.Any > c.Calls {
		elsewhere = c.Any - c.Calls
	}
	r := Range{Max: min(c.EAGAINAny, c.Calls)}
	if c.EAGAINAny > elsewhere {
		r.Min = c.EAGAINAny - elsewhere
	}
	// Counters are read one after another: a call can be counted as
	// failed before its entry is read. Never report Min above Max.
	r.Min = min(r.Min, r.Max)
	return r
}

func (c Count) add(d Count) Count {
	return Count{Calls: c.Calls + d.Calls, Any: c.Any + d.Any, EAGAINAny: c.EAGAINAny + d.EAGAINAny}
}

// sub is c - d, each field floored at 0 (d is an earlier reading).
func (c Count) sub(d Count) Count {
	return Count{Calls: floorSub(c.Calls, d.Calls), Any: floorSub(c.Any, d.Any), EAGAINAny: floorSub(c.EAGAINAny, d.EAGAINAny)}
}

func floorSub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// Range is a count known to lie between Min and Max, both included.
type Range struct{ Min, Max uint64 }

// Exact tells whether the range is a single number.
func (r Range) Exact() bool { return r.Min == r.Max }

func (r Range) String() string {
	if r.Exact() {
		return fmt.Sprint(r.Min)
	}
	return fmt.Sprintf("%d..%d", r.Min, r.Max)
}

// Counts are the totals of every counted call since the Counter opened.
type Counts struct {
	// Of holds each call's counters. A call whose tracepoint this kernel
	// lacks stays zero: Counter.Missing lists those.
	Of [NumSyscalls]Count
	// Socket holds, with Options.Sockets, each direction's socket calls
	// (indexed by Dir), of every kind together; Of is then zero. Its
	// Calls and Any are the same, so its EAGAIN is exact.
	Socket [2]Count
}

// Calls is how many calls of direction d were made on the counted fds.
func (c Counts) Calls(d Dir) uint64 {
	n := c.Socket[d].Calls
	for s := range NumSyscalls {
		if s.Dir() == d {
			n += c.Of[s].Calls
		}
	}
	return n
}

// EAGAIN is how many calls of direction d on the counted fds failed with
// EAGAIN: the sum of each call's range (summing per call keeps the range
// as narrow as each call allows).
func (c Counts) EAGAIN(d Dir) Range {
	r := c.Socket[d].EAGAIN()
	for s := range NumSyscalls {
		if s.Dir() == d {
			e := c.Of[s].EAGAIN()
			r.Min += e.Min
			r.Max += e.Max
		}
	}
	return r
}

// Sub is what happened between an earlier reading and this one.
func (c Counts) Sub(earlier Counts) Counts {
	var d Counts
	for s := range NumSyscalls {
		d.Of[s] = c.Of[s].sub(earlier.Of[s])
	}
	for dir := range c.Socket {
		d.Socket[dir] = c.Socket[dir].sub(earlier.Socket[dir])
	}
	return d
}

func (c Counts) add(d Counts) Counts {
	for s := range NumSyscalls {
		c.Of[s] = c.Of[s].add(d.Of[s])
	}
	for dir := range c.Socket {
		c.Socket[dir] = c.Socket[dir].add(d.Socket[dir])
	}
	return c
}
