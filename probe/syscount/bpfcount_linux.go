package syscount

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// Counting per process, with BPF. The programs (bpfprog_linux.go) are
// loaded once for this process and shared by every Counter open on
// them, each in a slot of its own; they are unloaded when the last such
// Counter closes, so nothing runs in the kernel while nobody counts.
//
// What it needs: CAP_BPF and CAP_PERFMON (root has both), a kernel with
// BPF tracepoint programs (CONFIG_BPF_EVENTS), and this process in the
// initial PID namespace (the programs see the kernel's process ids,
// /proc here shows the namespace's). Where any is missing, Open counts with per-thread perf
// counters instead: the same counts, at a higher cost to a process that
// switches often. A failure to load is kept: a later Counter does not
// try again (a failed load can take a second to undo).

// bpfEngine is the loaded programs and their maps.
type bpfEngine struct {
	// unloaded is closed once the programs are detached and the maps
	// freed (benchmarks wait for it, to measure with nothing loaded).
	unloaded chan struct{}
	maps     bpfMaps
	ncpu     int
	// base is the program for new processes; sets[set] the programs of
	// each set, attached when a Counter first asks for it (acquireBPF).
	base attached
	sets [numProgramSets]attached
	used [bpfMaxSlots]bool
	refs int
	// idle counts the times refs fell to 0: a linger's timer unloads only
	// if no Counter came and went since it was set.
	idle int
}

// programSet is a set of counting programs a Counter counts with.
type programSet int

const (
	// callSet counts each call on its own tracepoints (bpfprog_linux.go).
	callSet programSet = iota
	// socketSet counts socket calls at the socket layer (Options.Sockets,
	// bpfsock_linux.go).
	socketSet
	numProgramSets
)

// attached is what carries loaded programs: their links and the perf
// events they hang on; closing them detaches the programs. ok is set
// once the set passed its self-check.
type attached struct {
	hooks []hook
	ok    bool
}

func (a *attached) close() {
	for _, h := range a.hooks {
		h.close()
	}
	*a = attached{}
}

var bpfShared struct {
	sync.Mutex
	e *bpfEngine
	// failed is why the maps and the base program could not be loaded,
	// failedSet why each set could not: kept, so as not to try again.
	failed    error
	failedSet [numProgramSets]error
}

// acquireBPF returns the shared engine with set attached, loading the
// engine and the set on first use.
func acquireBPF(tp *tracepoints, set programSet) (*bpfEngine, error) {
	bpfShared.Lock()
	defer bpfShared.Unlock()
	if bpfShared.failed != nil {
		return nil, bpfShared.failed
	}
	if bpfShared.failedSet[set] != nil {
		return nil, bpfShared.failedSet[set]
	}
	if bpfShared.e == nil {
		e, err := loadBPF(tp)
		if err != nil {
			bpfShared.failed = err
			return nil, err
		}
		bpfShared.e = e
	}
	e := bpfShared.e
	if !e.sets[set].ok {
		if err := e.attachSet(tp, set); err != nil {
			e.sets[set].close()
			bpfShared.failedSet[set] = err
			return nil, err
		}
	}
	e.refs++
	return e, nil
}

// attachSet loads and attaches set's programs, then checks that they
// count this process's own calls.
func (e *bpfEngine) attachSet(tp *tracepoints, set programSet) error {
	a := &e.sets[set]
	var err error
	if set == socketSet {
		err = e.attachSockets(tp, a)
	} else {
		err = e.attachPerCall(tp, a)
	}
	if err == nil {
		err = e.selfCheck(set)
	}
	a.ok = err == nil
	return err
}

// releaseBPF drops a reference. The last one unloads everything, but
// only after bpfLinger without a Counter, and in the background:
//   - an exec side or sweep opens a Counter for each run of its client,
//     seconds apart, and reloading for each would cost every run;
//   - detaching takes the kernel about 70 ms a program (it waits for
//     every CPU to leave them), 1.3 s in all on the development VM,
//     against 5 ms to load, and it holds the kernel's tracepoint lock
//     meanwhile: a Counter opened then (a run's next client) would wait
//     for it. Measured: an exec side's client moved nothing in 18 of 32
//     samples under CI's load when each run reloaded.
//
// While the programs linger they count nothing (no process is left in
// their map) and cost the callers of the counted calls what they do
// while counting.
func releaseBPF(e *bpfEngine) {
	bpfShared.Lock()
	defer bpfShared.Unlock()
	if e.refs--; e.refs > 0 {
		return
	}
	e.idle++
	idle := e.idle
	time.AfterFunc(bpfLinger, func() {
		bpfShared.Lock()
		defer bpfShared.Unlock()
		if bpfShared.e == e && e.refs == 0 && e.idle == idle {
			bpfShared.e = nil
			go e.close()
		}
	})
}

// bpfLinger is how long the programs stay loaded without a Counter.
const bpfLinger = 5 * time.Second

func (e *bpfEngine) close() {
	defer close(e.unloaded)
	for i := range e.sets {
		e.sets[i].close()
	}
	e.base.close()
	m := e.maps
	for _, bm := range []*ebpf.Map{m.procs, m.socks, m.counts, m.inMmsg, m.mmsgs, m.bits, m.forkBits} {
		if bm != nil {
			bm.Close()
		}
	}
}

// loadBPF makes the maps, loads a program for each call's entry and
// exit and one for new processes, and attaches them.
//
// The programs go on each call's own tracepoints, not on
// raw_syscalls:sys_enter and sys_exit: those run a program at every
// system call of every process, and qemu-img and qemu-nbd make a fifth of
// theirs outside the ten calls counted (ppoll, mmap, munmap). Measured
// both ways on the development VM, the per-call programs cost the counted
// sweeps as little or less (bench/README, "Counting cost").
func loadBPF(tp *tracepoints) (*bpfEngine, error) {
	if err := inInitialPIDNamespace(); err != nil {
		return nil, err
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, err
	}
	e := &bpfEngine{ncpu: ncpu, unloaded: make(chan struct{})}
	if e.maps.procs, err = newMap("nbdscope_procs", ebpf.Hash, 4, 4*bpfWays, 4096); err != nil {
		return nil, err
	}
	if e.maps.socks, err = newMap("nbdscope_socks", ebpf.Hash, 16, 4, 4096); err != nil {
		e.close()
		return nil, err
	}
	if e.maps.counts, err = newMap("nbdscope_counts", ebpf.PerCPUArray, 4, uint32(8*bpfSlotValues), bpfMaxSlots); err != nil {
		e.close()
		return nil, err
	}
	if err := e.createSmallMaps(); err != nil {
		e.close()
		return nil, err
	}
	if err := e.attachFork(tp); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// createSmallMaps makes the maps beside procs, socks and counts
// (bpfprog_linux.go).
func (e *bpfEngine) createSmallMaps() error {
	var err error
	if e.maps.inMmsg, err = newMap("nbdscope_mmsg", ebpf.Hash, 4, 4, 16384); err != nil {
		return err
	}
	if e.maps.mmsgs, err = newMap("nbdscope_mmsgs", ebpf.Array, 4, 8, 1); err != nil {
		return err
	}
	if e.maps.bits, err = newMap("nbdscope_bits", ebpf.Array, 4, 8, bitWords); err != nil {
		return err
	}
	e.maps.forkBits, err = newMap("nbdscope_fbits", ebpf.Array, 4, 8, bitWords)
	return err
}

// setBit sets pid's bit in bits, which only this process writes.
func (e *bpfEngine) setBit(pid int) error {
	key := uint32(pid>>6) & (bitWords - 1)
	var word uint64
	if err := e.maps.bits.Lookup(key, &word); err != nil {
		return fmt.Errorf("reading the bpf process bits: %w", err)
	}
	word |= 1 << (pid & 63)
	if err := e.maps.bits.Update(key, word, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("setting the bpf process bits: %w", err)
	}
	return nil
}

// selfCheckFD is an fd number no process here has open.
const selfCheckFD = 1<<31 - 1

// selfCheck counts this process's own calls with set's programs: they
// must see exactly those made. It catches what the kernel would not
// refuse but would count wrong: another PID namespace (the programs see
// the kernel's process ids), a record laid out otherwise.
func (e *bpfEngine) selfCheck(set programSet) error {
	s := &bpfSlot{e: e, set: set, buf: make([]slotValues, e.ncpu), keys: map[sockKey]bool{}}
	if err := s.claimLocked(os.Getpid(), false); err != nil {
		return err
	}
	defer s.closeLocked()
	if set == socketSet {
		return checkSocketCounts(s)
	}
	if err := s.setFDs([]int{selfCheckFD}); err != nil {
		return err
	}
	for range 3 {
		unix.Write(selfCheckFD, nil) // EBADF, but entered
	}
	v, err := s.read()
	if err != nil {
		return err
	}
	if got := v[onFDsIndex(Write)]; got != 3 {
		return fmt.Errorf("the bpf counters saw %d of 3 writes of this process (another PID namespace?)", got)
	}
	return nil
}

// attachFork attaches the program that enters new processes.
func (e *bpfEngine) attachFork(tp *tracepoints) error {
	id, err := readEventID(tp.dir, "task", "task_newtask")
	if err != nil {
		return fmt.Errorf("the tracepoint for new processes: %w", err)
	}
	pidOff, err := fieldOffset(tp.dir, "task", "task_newtask", "pid")
	if err != nil {
		return err
	}
	flagsOff, err := fieldOffset(tp.dir, "task", "task_newtask", "clone_flags")
	if err != nil {
		return err
	}
	return e.attach(&e.base, id, "newtask", e.maps.forkProgram(pidOff, flagsOff))
}

// attachPerCall counts each call on its own entry and exit tracepoints.
func (e *bpfEngine) attachPerCall(tp *tracepoints, a *attached) error {
	for _, s := range tp.present() {
		fdOff, err := fieldOffset(tp.dir, "syscalls", "sys_enter_"+s.String(), "fd")
		if err != nil {
			return err
		}
		if err := e.attach(a, tp.enter[s], "enter_"+s.String(), e.maps.enterProgram(s, fdOff)); err != nil {
			return err
		}
		retOff, err := fieldOffset(tp.dir, "syscalls", "sys_exit_"+s.String(), "ret")
		if err != nil {
			return err
		}
		if err := e.attach(a, tp.exit[s], "exit_"+s.String(), e.maps.exitProgram(s, retOff)); err != nil {
			return err
		}
	}
	return nil
}

// attach loads a program and hangs it on tracepoint id (attachProgram).
func (e *bpfEngine) attach(to *attached, id uint64, name string, a *builder) error {
	prog, err := loadProgram(name, a)
	if err != nil {
		return err
	}
	h, err := attachProgram(id, name, prog)
	to.hooks = append(to.hooks, h)
	return err
}

// inInitialPIDNamespace refuses a process in a child PID namespace:
// bpf_get_current_pid_tgid gives the kernel's ids, which are not the
// ones this process knows its targets by. (/proc mounted inside the
// namespace hides that; selfCheck then catches it.)
func inInitialPIDNamespace() error {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	if v, ok := statusField(string(b), "NSpid"); ok && len(strings.Fields(v)) > 1 {
		return errors.New("this process runs in a PID namespace of its own")
	}
	return nil
}

// fieldOffset reads where a tracepoint's field starts in its record,
// from its format file ("field:int fd;	offset:16;	size:8;...").
// The programs read 8 bytes there; fieldOffset32 is for a 4-byte field
// the programs read as such (the socket layer's int ret).
func fieldOffset(dir, group, event, field string) (int16, error) {
	return fieldOffsetAligned(dir, group, event, field, 8)
}

func fieldOffset32(dir, group, event, field string) (int16, error) {
	return fieldOffsetAligned(dir, group, event, field, 4)
}

func fieldOffsetAligned(dir, group, event, field string, align int64) (int16, error) {
	b, err := os.ReadFile(filepath.Join(dir, "events", group, event, "format"))
	if err != nil {
		return 0, fmt.Errorf("reading the format of %s: %w", event, err)
	}
	off, ok := parseFieldOffset(string(b), field, align)
	if !ok {
		return 0, fmt.Errorf("tracepoint %s has no field %s at a %d-aligned offset", event, field, align)
	}
	return off, nil
}

// parseFieldOffset finds field's offset in a tracepoint format's text;
// false unless it is past the first 8 bytes, which the kernel keeps for
// itself, and a multiple of align.
func parseFieldOffset(format, field string, align int64) (int16, bool) {
	for line := range strings.Lines(format) {
		decl, rest, ok := strings.Cut(strings.TrimSpace(line), ";")
		if !ok || !strings.HasPrefix(decl, "field:") {
			continue
		}
		words := strings.Fields(decl)
		if len(words) == 0 || strings.TrimLeft(words[len(words)-1], "*") != field {
			continue
		}
		_, after, ok := strings.Cut(rest, "offset:")
		if !ok {
			return 0, false
		}
		num, _, _ := strings.Cut(after, ";")
		off, err := strconv.ParseInt(strings.TrimSpace(num), 10, 16)
		if err != nil || off < 8 || off%align != 0 {
			return 0, false
		}
		return int16(off), true
	}
	return 0, false
}

// slotValues is one CPU's values of a slot.
type slotValues [bpfSlotValues]uint64

// bpfSlot is one Counter's share of the engine.
type bpfSlot struct {
	e    *bpfEngine
	set  programSet
	slot uint32
	keys map[sockKey]bool // in socks
	buf  []slotValues     // one per possible CPU
}

// openBPFSlot starts counting pid (and, with children, the processes it
// starts from now on) in a slot of its own, from zero.
func openBPFSlot(tp *tracepoints, pid int, children bool, set programSet) (*bpfSlot, error) {
	e, err := acquireBPF(tp, set)
	if err != nil {
		return nil, err
	}
	s := &bpfSlot{e: e, set: set, buf: make([]slotValues, e.ncpu), keys: map[sockKey]bool{}}
	if err := s.claim(pid, children); err != nil {
		releaseBPF(e)
		return nil, err
	}
	return s, nil
}

// claim takes a free slot, zeroes it, and enters pid in procs.
func (s *bpfSlot) claim(pid int, children bool) error {
	bpfShared.Lock()
	defer bpfShared.Unlock()
	return s.claimLocked(pid, children)
}

func (s *bpfSlot) claimLocked(pid int, children bool) error {
	free := slices.Index(s.e.used[:], false)
	if free < 0 {
		return fmt.Errorf("all %d bpf counting slots are in use", bpfMaxSlots)
	}
	s.slot = uint32(free)
	key := uint32(pid)
	var ways [bpfWays]uint32
	s.e.maps.procs.Lookup(key, &ways) // none: all free
	way := slices.Index(ways[:], 0)
	if way < 0 {
		return fmt.Errorf("process %d is counted %d times already", pid, bpfWays)
	}
	clear(s.buf)
	if err := s.e.maps.counts.Update(s.slot, s.buf, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("zeroing a bpf counting slot: %w", err)
	}
	ways[way] = s.slot + 1
	if children {
		ways[way] |= bpfChildrenBit
	}
	if err := s.e.setBit(pid); err != nil {
		return err
	}
	if err := s.e.maps.procs.Update(key, ways, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("entering process %d for counting: %w", pid, err)
	}
	s.e.used[free] = true
	return nil
}

// read returns the slot's values, summed over the CPUs.
func (s *bpfSlot) read() ([bpfSlotValues]uint64, error) {
	var sum [bpfSlotValues]uint64
	if err := s.e.maps.counts.Lookup(s.slot, s.buf); err != nil {
		return sum, fmt.Errorf("reading the bpf counters: %w", err)
	}
	for cpu := range s.e.ncpu {
		for i, v := range s.buf[cpu] {
			sum[i] += v
		}
	}
	return sum, nil
}

// sockKey is a socks key: fd in process pid (0: in any process the slot
// counts).
type sockKey struct{ slot, pid, fd, _ uint32 }

// setFDs makes want (sorted, no repeats) the fds counted on in any
// process the slot counts.
func (s *bpfSlot) setFDs(want []int) error {
	return s.setKeys(map[int][]int{0: want})
}

// setKeys makes the fds counted on those of byPID, in each process (pid
// 0: in any of them).
func (s *bpfSlot) setKeys(byPID map[int][]int) error {
	want := map[sockKey]bool{}
	for pid, fds := range byPID {
		for _, fd := range fds {
			want[sockKey{slot: s.slot, pid: uint32(pid), fd: uint32(fd)}] = true
		}
	}
	one := uint32(1)
	for k := range want {
		if s.keys[k] {
			continue
		}
		if err := s.e.maps.socks.Update(k, one, ebpf.UpdateAny); err != nil {
			return fmt.Errorf("counting on fd %d of process %d: %w", k.fd, k.pid, err)
		}
		s.keys[k] = true
	}
	for k := range s.keys {
		if !want[k] {
			s.e.maps.socks.Delete(k)
			delete(s.keys, k)
		}
	}
	return nil
}

// close takes the slot's processes and fds out of the maps, frees the
// slot and releases the engine.
func (s *bpfSlot) close() {
	bpfShared.Lock()
	s.closeLocked()
	bpfShared.Unlock()
	releaseBPF(s.e)
}

func (s *bpfSlot) closeLocked() {
	s.setFDs(nil)
	s.leaveProcesses()
	s.e.used[s.slot] = false
}

// leaveProcesses takes the slot out of every process's ways: its
// target's and the children the fork program entered. A process left
// with no way is deleted.
func (s *bpfSlot) leaveProcesses() {
	var pids []uint32
	var pid uint32
	var ways [bpfWays]uint32
	for it := s.e.maps.procs.Iterate(); it.Next(&pid, &ways); {
		pids = append(pids, pid)
	}
	for _, pid := range pids {
		var ways [bpfWays]uint32
		if s.e.maps.procs.Lookup(pid, &ways) != nil {
			continue
		}
		mine := false
		for w, v := range ways {
			if v != 0 && (v&bpfSlotMask)-1 == s.slot {
				ways[w], mine = 0, true
			}
		}
		switch {
		case !mine:
		case ways == [bpfWays]uint32{}:
			s.e.maps.procs.Delete(pid)
		default:
			s.e.maps.procs.Update(pid, ways, ebpf.UpdateAny)
		}
	}
}

// WhyNotPerProcess is why counting per process (bpf) is not possible
// here, "" when it is: what an Auto Counter would fall back from. It
// loads the programs to find out (5 ms), unless a Counter has them
// loaded already.
func WhyNotPerProcess() string { return whyNot(callSet) }

// WhyNotSockets is why counting socket calls at the socket layer
// (Options.Sockets) is not possible here, "" when it is. It loads those
// programs to find out, unless a Counter has them loaded already.
func WhyNotSockets() string { return whyNot(socketSet) }

// whyNot is why set's programs cannot be loaded here, "" when they can.
func whyNot(set programSet) string {
	tp, err := loadTracepoints()
	if err != nil {
		return err.Error()
	}
	e, err := acquireBPF(tp, set)
	if err != nil {
		return bpfRefusal(err)
	}
	releaseBPF(e)
	return ""
}

// RefusedLog is the kernel verifier's log of the last counting program it
// refused in this process (its last lines), "" when none was: a failure
// is kept (bpfShared), so WhyNotPerProcess or WhyNotSockets finds it.
func RefusedLog() string {
	bpfShared.Lock()
	defer bpfShared.Unlock()
	for _, err := range append([]error{bpfShared.failed}, bpfShared.failedSet[:]...) {
		if l := VerifierLog(err, verifierLogLines); l != "" {
			return l
		}
	}
	return ""
}

// verifierLogLines is how much of a verifier's log is kept for a person
// to read: its end says which instruction and why.
const verifierLogLines = 20

// bpfRefusal says why the programs could not be loaded, with the fix
// where one is known.
func bpfRefusal(err error) string {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Sprintf("loading bpf programs needs root, or CAP_BPF and CAP_PERFMON (sudo setcap cap_bpf,cap_perfmon+ep %s): %v", executable(), err)
	}
	return err.Error()
}
