package syscount

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// fillTimer is the default way of measuring fill in the kernel: a
// program on a cpu-clock event of every CPU reads every watched socket's
// level at each tick (filltimerprog_linux.go). A watched socket's
// address is found by its inode when it is watched, by an iterator over
// unix sockets, or else at its next send call (filltimeriter_linux.go).
// The ticks cost the same whatever the data rate; the send calls cost a
// lookup each while the find program is on (only while a watched socket
// is left unfound; doctor measures both), never one per skb, where the exact
// programs run at every skb charged and freed (about 58 for a 2 MiB
// buffer of unix stream skbs). The timers run only while a socket is
// watched: an idle explorer wakes no CPU for them.
type fillTimer struct {
	maps   fillTimerMaps
	find   []hook // the find program, while it is on (setFind)
	timers []hook // one per CPU
	// iter runs fill_iter over unix sockets (nil where iterators are not
	// available: iterErr says why).
	iter     *link.Iter
	iterProg *ebpf.Program
	iterErr  error
	// sampleNS is the time one sample stands for: the timers' period
	// over the CPUs ticking.
	sampleNS float64
	slots    map[uint64]uint32 // watched inode -> its slot
	on       bool
	// dir and off are where the find program is built from, each time
	// it is attached (setFind).
	dir string
	off fillOffsets
}

// fillSlotMax is how many sockets the timer watches at once: a run's two
// sides at the most connections a side takes (64) is 128, with room for
// a reconnect's new sockets beside its old ones for a window. The tick
// reads only up to the highest slot in use, so the bound costs nothing
// where a run has a connection a side.
const fillSlotMax = 160

// fillTickNS is the time between two ticks, over all CPUs: every CPU's
// timer fires every fillTickNS × CPUs (2 ms on 2 CPUs), so that the
// machine takes 1000 samples a second of each watched socket whatever its
// number of CPUs. That is 250 readings in a 250 ms sample (a full or
// empty share within ±3.2 points at worst, one standard error), 2000 in
// the explorer's 2 s gauge (±1.1), 10,000 in a 10 s side (±0.5), against
// the sampler's 25, 200 and 1000 at 100 Hz. What bounds the rate is the
// tick's interrupt, not the program: on this 2-vCPU VM a tick took 12-13
// µs from what ran on its CPU (BenchmarkFillTimerTick: 1.2-1.3% of the
// CPU at twice this rate, 0.4-0.7% at it), where the program alone takes
// 0.5 µs for a run's 2 sockets (doctor).
const fillTickNS = 1_000_000

// openFillTimer loads the timer's programs and opens the timers,
// disabled until a socket is watched.
func openFillTimer() (*fillTimer, error) {
	dir, o, err := fillGround()
	if err != nil {
		return nil, err
	}
	t := &fillTimer{slots: map[uint64]uint32{}}
	if err := t.load(dir, o); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// load makes the maps, hangs the find program and opens the timers.
func (t *fillTimer) load(dir string, o fillOffsets) error {
	var err error
	if t.maps.slots, err = newMap("nbdscope_ftslot", ebpf.Array, 4, fillSlotSize, fillSlotMax); err != nil {
		return refusal(err)
	}
	if t.maps.inodes, err = newMap("nbdscope_ftino", ebpf.Hash, 8, 4, fillSlotMax); err != nil {
		return err
	}
	if t.maps.meta, err = newMap("nbdscope_ftmeta", ebpf.Array, 4, 8, metaEntries); err != nil {
		return err
	}
	t.dir, t.off = dir, o
	if err := t.setFind(true); err != nil { // it loads here, or the timer does not
		return err
	}
	t.iterErr = t.loadIter(o)
	prog, err := loadProgramType("fill_tick", ebpf.PerfEvent, fillTickProgram(o, t.maps))
	if err != nil {
		return refusal(err)
	}
	defer prog.Close() // each timer holds its own
	n := runtime.NumCPU()
	period := uint64(fillTickNS * n)
	for cpu := range n {
		p, err := prog.Clone()
		if err != nil {
			return err
		}
		h, err := attachTimer(cpu, period, p)
		if err != nil {
			h.close()
			if errors.Is(err, unix.ENODEV) {
				continue // an offline CPU
			}
			return err
		}
		t.timers = append(t.timers, h)
	}
	if len(t.timers) == 0 {
		return errors.New("no CPU's cpu-clock event could be opened for the fill timer")
	}
	t.sampleNS = float64(period) / float64(len(t.timers))
	return nil
}

// attachTimer hangs prog on a cpu-clock event of cpu firing every
// periodNS, disabled (enableTimers starts it).
func attachTimer(cpu int, periodNS uint64, prog *ebpf.Program) (hook, error) {
	h := hook{prog: prog, event: -1}
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK, Sample: periodNS, Bits: unix.PerfBitDisabled}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return h, fmt.Errorf("a cpu-clock event on CPU %d: %w", cpu, err)
	}
	h.event = fd
	if h.link, err = link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent}); err != nil {
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_BPF, prog.FD()); err != nil {
			return h, fmt.Errorf("attaching the fill timer's program on CPU %d: %w", cpu, err)
		}
	}
	return h, nil
}

// enableTimers starts or stops every CPU's timer.
func enableTimers(timers []hook, on bool) error {
	req := uint(unix.PERF_EVENT_IOC_DISABLE)
	if on {
		req = unix.PERF_EVENT_IOC_ENABLE
	}
	var errs []error
	for _, h := range timers {
		errs = append(errs, unix.IoctlSetInt(h.event, req, 0))
	}
	return errors.Join(errs...)
}

// close stops the timers and frees the programs and maps.
func (t *fillTimer) close() {
	for _, h := range append(t.timers, t.find...) {
		h.close()
	}
	t.timers, t.find = nil, nil
	if t.iter != nil {
		t.dropIter(nil)
	}
	for _, m := range []*ebpf.Map{t.maps.slots, t.maps.inodes, t.maps.meta} {
		if m != nil {
			m.Close()
		}
	}
}

// watch gives ino the lowest free slot, found by the iterator's next run
// (findWatched) or at its next send call, and starts the timers for the
// first socket.
func (t *fillTimer) watch(ino uint64) error {
	if _, ok := t.slots[ino]; ok {
		return nil
	}
	slot, ok := t.freeSlot()
	if !ok {
		return fmt.Errorf("the fill timer watches at most %d sockets", fillSlotMax)
	}
	if err := t.maps.slots.Put(slot, fillSlot{Inode: ino}); err != nil {
		return err
	}
	if err := t.maps.inodes.Put(ino, slot); err != nil {
		return err
	}
	t.slots[ino] = slot
	return t.setHi()
}

func (t *fillTimer) freeSlot() (uint32, bool) {
	used := make([]bool, fillSlotMax)
	for _, s := range t.slots {
		used[s] = true
	}
	for i, u := range used {
		if !u {
			return uint32(i), true
		}
	}
	return 0, false
}

// unwatch frees ino's slot, and stops the timers after the last socket.
func (t *fillTimer) unwatch(ino uint64) {
	slot, ok := t.slots[ino]
	if !ok {
		return
	}
	delete(t.slots, ino)
	t.maps.inodes.Delete(ino)
	t.maps.slots.Put(slot, fillSlot{})
	t.setHi()
	if t.finding() && t.iter != nil { // it may have been for this one
		t.syncFind()
	}
}

// setHi tells the tick where the slots in use end, and runs the timers
// while there are any.
func (t *fillTimer) setHi() error {
	hi := uint64(0)
	for _, s := range t.slots {
		hi = max(hi, uint64(s)+1)
	}
	if err := t.maps.meta.Put(uint32(metaHi), hi); err != nil {
		return err
	}
	if on := hi > 0; on != t.on {
		if err := enableTimers(t.timers, on); err != nil {
			return fmt.Errorf("the fill timer's cpu-clock events: %w", err)
		}
		t.on = on
	}
	return nil
}

// read is ino's samples as sums of time, each sample standing for
// sampleNS.
func (t *fillTimer) read(ino, _ uint64) (fillSums, uint64, bool) {
	slot, ok := t.slots[ino]
	var v fillSlot
	if !ok || t.maps.slots.Lookup(slot, &v) != nil || v.Inode != ino {
		return fillSums{}, 0, false
	}
	d := t.sampleNS
	return fillSums{total: float64(v.Samples) * d, bytes: float64(v.Bytes) * d, full: float64(v.Full) * d,
		empty: float64(v.Empty) * d, samples: float64(v.Samples)}, v.LastLevel, true
}

// counts are the programs' own counters: the ticks run and the send
// calls of a watched socket seen.
func (t *fillTimer) counts() (ticks, finds uint64) {
	t.maps.meta.Lookup(uint32(metaTicks), &ticks)
	t.maps.meta.Lookup(uint32(metaFinds), &finds)
	return ticks, finds
}

// iterFinds is how many watched sockets the iterator found, over its
// runs.
func (t *fillTimer) iterFinds() (n uint64) {
	t.maps.meta.Lookup(uint32(metaIterFinds), &n)
	return n
}

// foundBy says how the timer finds a watched socket, and why not by the
// iterator where it cannot ("" where it can).
func (t *fillTimer) foundBy() (string, string) {
	if t.iter == nil {
		why := "iterators are not available"
		if t.iterErr != nil {
			why = t.iterErr.Error()
		}
		return FoundBySend, why
	}
	return FoundByIterator, ""
}
