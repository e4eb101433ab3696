package syscount

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// perfBitInheritThread is perf_event_attr.inherit_thread (bit 35 of the
// flags, Linux 5.13): inherit to new threads only, not to new processes.
// x/sys/unix does not name it.
const perfBitInheritThread = 1 << 35

// event is one tracepoint counter: its id and, if any, its filter.
type event struct {
	id     uint64
	filter string
}

// useGroups reads a thread's counters with one read(2) of an event group
// instead of one read per counter; the benchmarks compare both.
var useGroups = true

// group is the counters of one thread: fds[0] leads when grouped.
type group struct {
	fds     []int
	grouped bool
}

// mode is how counters are opened.
type mode struct {
	// children: inherit to new processes too, not only to new threads.
	children bool
	// userOnly sets exclude_kernel (and exclude_hv). A syscall tracepoint
	// hands perf the caller's user registers, so the kernel still counts
	// every call, and a counter that excludes the kernel needs only
	// kernel.perf_event_paranoid ≤ 2 (the usual default) instead of ≤ 1.
	// userOnlyWorks checks that on this kernel before it is relied on.
	userOnly bool
}

// openGroup opens evs on thread tid, inherited by the threads (and, with
// m.children, processes) it starts. The filters are set before the events
// count anything: the group is opened disabled, and enabled at the end
// if enable is set (else by the caller, with enable).
func openGroup(tid int, evs []event, m mode, enable bool) (group, error) {
	g := group{grouped: useGroups}
	for i, ev := range evs {
		attr := unix.PerfEventAttr{
			Type:   unix.PERF_TYPE_TRACEPOINT,
			Config: ev.id,
			// Sample (the period) 0: counting only. With a period the kernel
			// would prepare a sample at every call for a ring buffer nobody
			// maps (measured: +0.8 µs per call on the development VM).
			Sample: 0,
			Bits:   unix.PerfBitInherit,
		}
		attr.Size = uint32(unsafe.Sizeof(attr))
		if !m.children {
			attr.Bits |= perfBitInheritThread
		}
		if m.userOnly {
			attr.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv
		}
		leader := -1
		if g.grouped {
			attr.Read_format = unix.PERF_FORMAT_GROUP
			if i == 0 {
				attr.Bits |= unix.PerfBitDisabled
			} else {
				leader = g.fds[0]
			}
		} else {
			attr.Bits |= unix.PerfBitDisabled
		}
		fd, err := unix.PerfEventOpen(&attr, tid, -1, leader, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			g.close()
			// Wrapped, not classified: the caller knows whose thread it is
			// and tells the reasons apart by the errno (classifyOpen).
			return group{}, fmt.Errorf("perf_event_open on thread %d: %w", tid, err)
		}
		g.fds = append(g.fds, fd)
		if ev.filter == "" {
			continue
		}
		if err := unix.IoctlSetString(fd, unix.PERF_EVENT_IOC_SET_FILTER, ev.filter); err != nil {
			g.close()
			return group{}, fmt.Errorf("setting tracepoint filter %q: %w", ev.filter, err)
		}
	}
	if !enable {
		return g, nil
	}
	if err := g.enable(true); err != nil {
		g.close()
		return group{}, err
	}
	return g, nil
}

// enable starts (or stops) the group's counting, and that of the copies
// its thread's descendants inherited.
func (g group) enable(on bool) error {
	req := uint(unix.PERF_EVENT_IOC_DISABLE)
	if on {
		req = unix.PERF_EVENT_IOC_ENABLE
	}
	for i, fd := range g.fds {
		if g.grouped && i > 0 {
			break // the leader switches the group
		}
		if err := unix.IoctlSetInt(fd, req, 0); err != nil {
			return fmt.Errorf("switching a counter on or off: %w", err)
		}
	}
	return nil
}

// read adds the group's values, in event order, to vals (len(g.fds)).
// scratch holds at least 1+len(g.fds) values, so that a reading allocates
// nothing.
//
// Linux 6.18 sometimes refuses to read a counter whose thread is exiting
// (ECHILD; seen 1 run in 30 of TestSetFDs at a load average of 8, never on
// a quiet machine): the read is made again for up to echildWait, and the
// error is returned if it lasts, rather than a count that would miss the
// thread's calls.
func (g group) read(vals, scratch []uint64) error {
	err := g.readNow(scratch)
	for deadline := time.Now().Add(echildWait); errors.Is(err, unix.ECHILD) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		err = g.readNow(scratch)
	}
	if err != nil {
		return err
	}
	for i := range g.fds {
		vals[i] += scratch[i]
	}
	return nil
}

// echildWait bounds how long read waits out an exiting thread's ECHILD.
const echildWait = 200 * time.Millisecond

// readNow reads the group's values into scratch[:len(g.fds)].
func (g group) readNow(scratch []uint64) error {
	if g.grouped {
		// PERF_FORMAT_GROUP: u64 nr, then nr values, leader first.
		buf := scratch[:1+len(g.fds)]
		if err := readU64s(g.fds[0], buf); err != nil {
			return err
		}
		if buf[0] != uint64(len(g.fds)) {
			return fmt.Errorf("counter group read %d values, want %d", buf[0], len(g.fds))
		}
		copy(scratch, buf[1:])
		return nil
	}
	var one [1]uint64
	for i, fd := range g.fds {
		if err := readU64s(fd, one[:]); err != nil {
			return err
		}
		scratch[i] = one[0]
	}
	return nil
}

func readU64s(fd int, buf []uint64) error {
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	for {
		n, err := unix.Read(fd, b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading a counter: %w", err)
		}
		if n != len(b) {
			return fmt.Errorf("reading a counter: %d bytes, want %d", n, len(b))
		}
		return nil
	}
}

func (g group) close() {
	// Siblings first, leader last.
	for i := len(g.fds) - 1; i >= 0; i-- {
		unix.Close(g.fds[i])
	}
}

// userOnlyState remembers what userOnlyWorks found.
var userOnlyState struct {
	sync.Mutex
	known, works bool
}

// userOnlyWorks tells whether this kernel counts syscall tracepoints in a
// counter that excludes the kernel, by counting three write calls of this
// thread; an answer is kept once a counter could be opened at all.
func userOnlyWorks(tp *tracepoints) bool {
	userOnlyState.Lock()
	defer userOnlyState.Unlock()
	if userOnlyState.known {
		return userOnlyState.works
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g, err := openGroup(unix.Gettid(), []event{{id: tp.enter[Write]}}, mode{children: true, userOnly: true}, true)
	if err != nil {
		return false // not known: perhaps not permitted yet
	}
	defer g.close()
	for range 3 {
		unix.Write(-1, nil) // EBADF, but entered
	}
	var vals, scratch [2]uint64
	if err := g.read(vals[:1], scratch[:]); err != nil {
		return false
	}
	userOnlyState.known, userOnlyState.works = true, vals[0] == 3
	return userOnlyState.works
}
