package syscount

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"nbdscope/platform"
)

// maxAttachAttempts bounds the retries of an attach that raced with the
// creation of a thread (see attach).
const maxAttachAttempts = 50

// Counter counts one process's calls. It is not safe for concurrent use.
//
// Counting per process (bpf), it holds a slot of the shared programs'
// maps (bpfcount_linux.go); what follows is of counting per thread.
//
// Each thread carries 2 counters per call counted (its entries, its
// EAGAIN exits), plus 1 per call when counting some fds (its entries on
// them) unless Options.AnyFD counts that call on any fd: 20 to 30 for the
// ten calls. The kernel moves every one of them on and off the CPU at each
// of the thread's context switches, which is most of what counting costs
// a process that blocks often (BenchmarkPingPong: about 0.35 µs per counter
// per switch on the development VM); hence one filter for all the counted
// fds rather than counters per fd, Options.AnyFD, and Options.Calls to
// count fewer calls.
type Counter struct {
	pid     int
	tp      *tracepoints
	present []Syscall
	missing []Syscall
	allFDs  bool
	mode    mode
	// base holds, per thread present at Open, the entry and the EAGAIN
	// exit counter of each present call, on any fd.
	base []group
	// fds are the counted fds, in order; onFDs holds per thread the entry
	// counter of each call of filtered (the present calls not counted on
	// any fd) filtered to them (nil without fds, or without such calls).
	fds      []int
	filtered []Syscall
	onFDs    []group
	// retired is what earlier sets of fds counted.
	retired Counts
	pidfd   int
	vals    []uint64
	scratch []uint64
	// bpf, when set, counts instead of base and onFDs (PerProcess);
	// bpfWhy is why it is not, when Auto fell back to PerThread.
	bpf        *bpfSlot
	bpfWhy     string
	perProcess bool
	// sockets: the counter counts socket calls at the socket layer
	// (Options.Sockets), with set's programs.
	sockets bool
	set     programSet
	byPID   map[int][]int // the fds counted per process (bpf; 0: in all)
}

// Open starts counting process pid's calls. The counts start at zero.
// An error is an *Unavailable when the system does not allow counting.
func Open(pid int, opt Options) (*Counter, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("counting system calls: bad process id %d", pid)
	}
	tp, err := loadTracepoints()
	if err != nil {
		return nil, err
	}
	c := &Counter{pid: pid, tp: tp, allFDs: opt.AllFDs || opt.Sockets, mode: mode{children: opt.Children, userOnly: userOnlyWorks(tp)}, pidfd: -1}
	c.present, c.missing = chooseCalls(tp, opt.Calls)
	if len(c.present) == 0 {
		return nil, &Unavailable{Reason: ReasonNoSyscallTracepoints,
			Why: "the kernel has no tracepoints for the calls asked for under " + tp.dir + "/events/syscalls"}
	}
	for _, s := range c.present {
		if !slices.Contains(opt.AnyFD, s) {
			c.filtered = append(c.filtered, s)
		}
	}
	n := 2 * len(c.present)
	c.vals, c.scratch = make([]uint64, n), make([]uint64, n+1)
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		c.pidfd = fd
	}
	if err := c.start(opt); err != nil {
		c.Close()
		return nil, err
	}
	if !c.allFDs {
		if err := c.SetFDs(opt.FDs); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// start opens the counters by the mechanism opt asks for: per process
// where it can (Auto), falling back to per thread with the reason kept.
func (c *Counter) start(opt Options) error {
	if opt.Sockets {
		return c.startSockets(opt)
	}
	if opt.Mechanism != PerThread {
		if _, err := tasks(c.pid); err != nil {
			return err // gone, as the per-thread path says it
		}
		slot, err := openBPFSlot(c.tp, c.pid, opt.Children, callSet)
		if err == nil {
			c.bpf, c.perProcess = slot, true
			c.mode.children = opt.Children
			return nil
		}
		if opt.Mechanism == PerProcess {
			return fmt.Errorf("counting system calls of process %d per process (bpf): %w", c.pid, err)
		}
		c.bpfWhy = bpfRefusal(err)
	}
	var err error
	c.base, err = c.attach(c.baseEvents(), true)
	return err
}

// startSockets counts the socket calls per process, or says why it
// cannot: there is no per-thread way (Options.Sockets).
func (c *Counter) startSockets(opt Options) error {
	if opt.Mechanism == PerThread {
		return fmt.Errorf("counting the socket calls of process %d: only per process (bpf), not per thread", c.pid)
	}
	if _, err := tasks(c.pid); err != nil {
		return err
	}
	slot, err := openBPFSlot(c.tp, c.pid, opt.Children, socketSet)
	if err != nil {
		return fmt.Errorf("counting the socket calls of process %d per process (bpf): %w", c.pid, err)
	}
	c.bpf, c.perProcess, c.sockets, c.set = slot, true, true, socketSet
	c.mode.children = opt.Children
	return nil
}

// Mechanism is how the counter counts: PerProcess or PerThread.
func (c *Counter) Mechanism() Mechanism {
	if c.perProcess {
		return PerProcess
	}
	return PerThread
}

// WhyPerThread is why an Auto counter counts per thread ("" when it
// counts per process, or was asked to count per thread).
func (c *Counter) WhyPerThread() string { return c.bpfWhy }

// chooseCalls splits the calls asked for (all when none) into those the
// kernel has tracepoints for and those it lacks.
func chooseCalls(tp *tracepoints, asked []Syscall) (present, missing []Syscall) {
	for s := range NumSyscalls {
		if asked != nil && !slices.Contains(asked, s) {
			continue
		}
		if tp.enter[s] != 0 && tp.exit[s] != 0 {
			present = append(present, s)
		} else {
			missing = append(missing, s)
		}
	}
	return present, missing
}

func (c *Counter) baseEvents() []event {
	var evs []event
	for _, s := range c.present {
		evs = append(evs, event{id: c.tp.enter[s]}, event{id: c.tp.exit[s], filter: "ret == -11"})
	}
	return evs
}

// fdEvents are the entry counters of each call, filtered to fds.
func (c *Counter) fdEvents(fds []int) []event {
	var f []string
	for _, fd := range fds {
		f = append(f, "fd == "+strconv.Itoa(fd))
	}
	filter := strings.Join(f, " || ")
	var evs []event
	for _, s := range c.filtered {
		evs = append(evs, event{id: c.tp.enter[s], filter: filter})
	}
	return evs
}

// attach opens evs on every thread of the process, with inherit, so that
// threads started later count too; enabled, or not for the caller to
// switch on.
//
// A thread created while the counters are being opened may have been
// cloned from a thread not yet counted: it then has no counter, and
// nothing tells it apart from one that inherited its creator's (opening a
// counter for it as well would count its calls twice; measured). So the
// threads are listed again after opening: if a new one appeared, the
// attempt is closed and made again, until one finishes with the same
// threads it started with. From then on every new thread descends from a
// counted one and inherits, which is why Read never opens counters for
// threads it has not seen.
func (c *Counter) attach(evs []event, enable bool) ([]group, error) {
	for range maxAttachAttempts {
		before, err := tasks(c.pid)
		if err != nil {
			return nil, err
		}
		groups, err := c.openOn(before, evs, enable)
		if err != nil {
			return nil, err
		}
		after, err := tasks(c.pid)
		if err == nil && isSubset(after, before) {
			return groups, nil
		}
		closeAll(groups)
		if err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("counting system calls of process %d: it started new threads during each of %d attempts to attach", c.pid, maxAttachAttempts)
}

// openOn opens evs on each thread of tids; a thread that has exited
// meanwhile is skipped (it makes no more calls), but not all of them.
func (c *Counter) openOn(tids []int, evs []event, enable bool) ([]group, error) {
	var groups []group
	for _, tid := range tids {
		g, err := openGroup(tid, evs, c.mode, enable)
		if errors.Is(err, unix.EINVAL) && threadExiting(c.pid, tid) {
			continue // refused as it exits (Linux 6.18): as ESRCH
		}
		if errors.Is(err, unix.EINVAL) && !c.mode.children {
			// No inherit_thread before Linux 5.13: children are counted too.
			c.mode.children = true
			g, err = openGroup(tid, evs, c.mode, enable)
		}
		if errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			closeAll(groups)
			return nil, classifyOpen(err, c.pid, c.mode, c.tp)
		}
		groups = append(groups, g)
	}
	if len(groups) == 0 {
		return nil, gone(c.pid)
	}
	return groups, nil
}

// Read returns the counts since Open. A process that has exited keeps its
// last counts: the kernel keeps an exited thread's counter readable, and
// an inherited counter adds its counts to its parent's when its thread
// exits.
func (c *Counter) Read() (Counts, error) {
	if c.perProcess {
		return c.readBPF()
	}
	counts := c.retired
	for _, g := range c.base {
		vals := c.vals[:len(g.fds)]
		clear(vals)
		if err := g.read(vals, c.scratch); err != nil {
			return Counts{}, fmt.Errorf("counting system calls of process %d: %w", c.pid, err)
		}
		for i, s := range c.present {
			counts.Of[s].Any += vals[2*i]
			counts.Of[s].EAGAINAny += vals[2*i+1]
		}
	}
	for s := range NumSyscalls {
		if c.onAnyFD(s) {
			counts.Of[s].Calls = counts.Of[s].Any
		}
	}
	if c.allFDs {
		return counts, nil
	}
	d, err := c.readFDs(c.onFDs)
	if err != nil {
		return Counts{}, err
	}
	return counts.add(d), nil
}

// onAnyFD tells whether s's calls on the counted fds are its calls on any
// fd: when the counter counts every fd, or s is one of Options.AnyFD.
func (c *Counter) onAnyFD(s Syscall) bool {
	return c.allFDs || !slices.Contains(c.filtered, s)
}

// errAllFDs refuses fds to a counter that counts every fd.
var errAllFDs = errors.New("counting system calls: the counter counts every fd; open another to count some")

// readBPF reads the slot's counts: the same three raw counters per call
// as the perf counters give.
func (c *Counter) readBPF() (Counts, error) {
	if c.bpf == nil {
		return c.retired, nil // closed, or a benchmark's pause
	}
	v, err := c.bpf.read()
	if err != nil {
		return Counts{}, fmt.Errorf("counting system calls of process %d: %w", c.pid, err)
	}
	counts := c.retired // zero, but for benchmarks that pause counting
	if c.sockets {
		for d := range counts.Socket {
			n := v[socketIndex(Dir(d))]
			counts.Socket[d] = counts.Socket[d].add(Count{Calls: n, Any: n, EAGAINAny: v[socketEAGAINIndex(Dir(d))]})
		}
		return counts, nil
	}
	for _, s := range c.present {
		n := Count{Any: v[anyIndex(s)], EAGAINAny: v[eagainIndex(s)], Calls: v[onFDsIndex(s)]}
		if c.onAnyFD(s) {
			n.Calls = n.Any
		}
		counts.Of[s] = counts.Of[s].add(n)
	}
	return counts, nil
}

// readFDs reads the entry counters filtered to the fds.
func (c *Counter) readFDs(groups []group) (Counts, error) {
	var counts Counts
	for _, g := range groups {
		vals := c.vals[:len(g.fds)]
		clear(vals)
		if err := g.read(vals, c.scratch); err != nil {
			return Counts{}, fmt.Errorf("counting system calls of process %d: %w", c.pid, err)
		}
		for i, s := range c.filtered {
			counts.Of[s].Calls += vals[i]
		}
	}
	return counts, nil
}

// SetFDs changes the fds whose calls are counted, from now on: a new fd's
// earlier calls are not counted, and what the old set counted is kept.
// The counters for the new set are opened first, stopped; then, thread by
// thread, the old ones are stopped and the new ones started: the calls
// the process makes in those microseconds on fds of both sets are missed.
// (A caller that polls for new connections also misses the calls a
// connection makes between its accept and the poll that adds it.)
func (c *Counter) SetFDs(fds []int) error {
	if c.allFDs {
		return errAllFDs
	}
	want, err := normalFDs(fds)
	if err != nil {
		return err
	}
	if c.perProcess {
		return c.setKeys(map[int][]int{0: want})
	}
	if slices.Equal(want, c.fds) {
		return nil
	}
	var next []group
	if len(want) > 0 && len(c.filtered) > 0 {
		if next, err = c.attach(c.fdEvents(want), false); err != nil {
			return err
		}
	}
	for _, g := range c.onFDs {
		g.enable(false)
	}
	for _, g := range next {
		if err := g.enable(true); err != nil {
			closeAll(next)
			return err
		}
	}
	d, err := c.readFDs(c.onFDs)
	if err != nil {
		closeAll(next)
		return err
	}
	c.retired = c.retired.add(d)
	closeAll(c.onFDs)
	c.fds, c.onFDs = want, next
	return nil
}

// SetProcessFDs is SetFDs for a process tree: byPID holds the fds of each
// process (the target, a child it started), and each is counted in that
// process only, where the counter counts per process (bpf). Per thread
// (perf) a filter cannot tell processes apart: the fds of them all are
// counted in each, as with SetFDs. A caller following a tree's sockets
// (sockdiag.TreeSockets) gets its children's read and write calls on
// their own sockets this way, not on whatever their fd numbers are.
func (c *Counter) SetProcessFDs(byPID map[int][]int) error {
	if c.allFDs {
		return errAllFDs
	}
	norm := make(map[int][]int, len(byPID))
	var union []int
	for pid, fds := range byPID {
		want, err := normalFDs(fds)
		if err != nil {
			return err
		}
		if pid <= 0 {
			return fmt.Errorf("counting system calls: bad process id %d", pid)
		}
		norm[pid], union = want, append(union, want...)
	}
	if !c.perProcess {
		return c.SetFDs(union)
	}
	return c.setKeys(norm)
}

// setKeys points the bpf slot at byPID's fds (pid 0: in every process).
func (c *Counter) setKeys(byPID map[int][]int) error {
	if maps.EqualFunc(byPID, c.byPID, slices.Equal) {
		return nil
	}
	if c.bpf != nil { // nil: closed, or a benchmark's pause
		if err := c.bpf.setKeys(byPID); err != nil {
			return err
		}
	}
	var union []int
	for _, fds := range byPID {
		union = append(union, fds...)
	}
	c.fds, _ = normalFDs(union)
	c.byPID = byPID
	return nil
}

// normalFDs sorts fds and drops repeats; a negative fd is an error.
func normalFDs(fds []int) ([]int, error) {
	var out []int
	for _, fd := range fds {
		if fd < 0 {
			return nil, fmt.Errorf("counting system calls: bad fd %d", fd)
		}
		out = append(out, fd)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// FDs are the fds counted, in order; nil when every fd is.
func (c *Counter) FDs() []int {
	if c.allFDs {
		return nil
	}
	return slices.Clone(c.fds)
}

// Missing lists the calls asked for that this kernel has no tracepoints
// for (they stay zero in Counts).
func (c *Counter) Missing() []Syscall { return slices.Clone(c.missing) }

// Children tells whether processes the target starts are counted too:
// asked for in Options, or forced by a kernel older than 5.13.
func (c *Counter) Children() bool { return c.mode.children }

// Exited tells whether the process has exited (its counts are final).
func (c *Counter) Exited() bool {
	if c.pidfd >= 0 {
		fds := []unix.PollFd{{Fd: int32(c.pidfd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		return err == nil && n > 0
	}
	return errors.Is(unix.Kill(c.pid, 0), unix.ESRCH)
}

// Close releases every counter. The counts are gone with them.
func (c *Counter) Close() error {
	if c.bpf != nil {
		c.bpf.close()
		c.bpf = nil
	}
	closeAll(c.base)
	closeAll(c.onFDs)
	c.base, c.onFDs, c.fds = nil, nil, nil
	if c.pidfd >= 0 {
		unix.Close(c.pidfd)
		c.pidfd = -1
	}
	return nil
}

func closeAll(groups []group) {
	for _, g := range groups {
		g.close()
	}
}

// tasks lists the threads of process pid, in order.
func tasks(pid int) ([]int, error) {
	entries, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if errors.Is(err, os.ErrNotExist) {
		return nil, gone(pid)
	}
	if err != nil {
		return nil, fmt.Errorf("listing the threads of process %d: %w", pid, err)
	}
	tids := make([]int, 0, len(entries))
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	sort.Ints(tids)
	return tids, nil
}

// threadExiting tells whether thread tid of process pid has exited or
// is exiting (a zombie, or dead, or gone from /proc).
func threadExiting(pid, tid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return true
	}
	f, ok := platform.StatFields(b)
	if !ok || len(f) == 0 {
		return false
	}
	return strings.IndexByte("ZXx", f[0][0]) >= 0
}

// isSubset tells whether every element of a (sorted) is in b (sorted).
func isSubset(a, b []int) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			return false
		}
	}
	return true
}

func gone(pid int) error {
	return &Unavailable{Reason: ReasonGone, Why: fmt.Sprintf("process %d has exited", pid), Err: unix.ESRCH}
}
