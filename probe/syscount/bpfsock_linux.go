package syscount

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// Counting socket calls at the socket layer (Options.Sockets). The
// kernel's sock:sock_recv_length and sock:sock_send_length tracepoints
// (Linux 6.3+) fire once in every receive and send a socket makes for a
// caller, with its result: recvmsg, recvfrom, read and readv on a socket
// all receive through sock_recvmsg, and the send calls through
// sock_sendmsg. A program there counts one call of its direction, and an
// EAGAIN when that is the result, for the counted processes.
//
// Why not the syscall tracepoints, as callSet does: the read and write
// tracepoints fire for every read and write on the machine, an eventfd's
// as much as a socket's, and each entry and exit costs its caller the
// tracepoint's own path before any program runs (BenchmarkTracepointFloor:
// 292 ns a call here). qemu-nbd and qemu-img make two to three eventfd
// reads and writes for each socket call, so counting them per call cost
// qemu-nbd 10% more CPU per GiB at the default buffer. The socket-layer
// tracepoints cost a socket call about 0.13 µs, once, and anything else
// nothing (BenchmarkSocketFloor).
//
// recvmmsg and sendmmsg receive or send each message through the socket
// layer, but strace counts each such call once: their own syscall
// tracepoints count the call (and its EAGAIN), and mark the thread as
// inside one (the inMmsg map) so that the socket layer's events within it
// are not counted again. They are socket calls only, so their
// tracepoints fire for nothing else.
//
// What the socket layer sees that strace does not: a socket's I/O that
// no system call of these ten made (io_uring, sendfile, splice), none of
// which qemu, nbdkit or libnbd use for NBD. What strace sees that it does
// not: a call that failed before reaching a socket (a bad fd, a bad
// buffer address).

// sockEvents are the socket layer's tracepoints, per direction.
var sockEvents = [2]string{Recv: "sock_recv_length", Send: "sock_send_length"}

// mmsgCalls are the calls counted on their own tracepoints, per direction.
var mmsgCalls = [2]Syscall{Recv: Recvmmsg, Send: Sendmmsg}

// attachSockets loads and attaches the socket layer's programs and the
// mmsg calls' into a.
func (e *bpfEngine) attachSockets(tp *tracepoints, a *attached) error {
	for d, ev := range sockEvents {
		dir := Dir(d)
		id, err := readEventID(tp.dir, "sock", ev)
		if err != nil {
			return fmt.Errorf("the socket layer's tracepoint sock:%s (Linux 6.3+): %w", ev, err)
		}
		retOff, err := fieldOffset32(tp.dir, "sock", ev, "ret")
		if err != nil {
			return err
		}
		if err := e.attach(a, id, "sock_"+dir.String(), e.maps.socketProgram(dir, retOff)); err != nil {
			return err
		}
		s := mmsgCalls[d]
		if !tp.has(s) {
			continue // no such call here: none to count
		}
		retOff, err = fieldOffset(tp.dir, "syscalls", "sys_exit_"+s.String(), "ret")
		if err != nil {
			return err
		}
		if err := e.attach(a, tp.enter[s], "in_"+s.String(), e.maps.mmsgEnterProgram(dir)); err != nil {
			return err
		}
		if err := e.attach(a, tp.exit[s], "out_"+s.String(), e.maps.mmsgExitProgram(dir, retOff)); err != nil {
			return err
		}
	}
	return nil
}

// The stack slots the socket programs use beside lookupProc's (-4) and
// eachWay's (-8): the thread id, an inMmsg value, the call's result.
const (
	tidSlot    = -40
	markSlot   = -44
	resultSlot = -56
)

// socketProgram counts a socket call of direction d, and its EAGAIN,
// unless the thread is inside an mmsg call. The result is the record's
// 32-bit int at retOffset.
func (m bpfMaps) socketProgram(d Dir, retOffset int16) *builder {
	a := &builder{}
	a.emit(asm.Mov.Reg(asm.R6, asm.R1))
	m.lookupProc(a)
	m.skipInMmsg(a)
	a.emit(asm.LoadMem(asm.R1, asm.R6, retOffset, asm.Word), asm.LSh.Imm(asm.R1, 32), asm.ArSh.Imm(asm.R1, 32), asm.StoreMem(asm.RFP, resultSlot, asm.R1, asm.DWord))
	m.eachWay(a, func(next string) {
		addOne(a, socketIndex(d))
		a.emit(asm.LoadMem(asm.R1, asm.RFP, resultSlot, asm.DWord))
		a.emit(asm.JNE.Imm(asm.R1, eagainRet, next))
		addOne(a, socketEAGAINIndex(d))
	})
	finish(a)
	return a
}

// skipInMmsg emits a jump to "out" when the calling thread is inside an
// mmsg call: looked up in inMmsg only while some counted thread is
// (mmsgs), which is never for qemu, nbdkit or libnbd clients.
func (m bpfMaps) skipInMmsg(a *builder) {
	a.emit(asm.Mov.Imm(asm.R1, 0), asm.StoreMem(asm.RFP, tidSlot, asm.R1, asm.Word), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, tidSlot))
	a.emit(mapPtr(asm.R1, m.mmsgs))
	a.emit(asm.FnMapLookupElem.Call())
	a.emit(asm.JEq.Imm(asm.R0, 0, "none"))
	a.emit(asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord))
	a.emit(asm.JEq.Imm(asm.R1, 0, "none"))
	a.emit(asm.FnGetCurrentPidTgid.Call(), asm.StoreMem(asm.RFP, tidSlot, asm.R0, asm.Word))
	a.emit(asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, tidSlot))
	a.emit(mapPtr(asm.R1, m.inMmsg))
	a.emit(asm.FnMapLookupElem.Call())
	a.emit(asm.JNE.Imm(asm.R0, 0, "out"))
	a.label("none")
}

// addMmsgs emits mmsgs[0] += delta, atomically.
func (m bpfMaps) addMmsgs(a *builder, delta int32) {
	a.emit(asm.Mov.Imm(asm.R1, 0), asm.StoreMem(asm.RFP, tidSlot, asm.R1, asm.Word), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, tidSlot))
	a.emit(mapPtr(asm.R1, m.mmsgs))
	a.emit(asm.FnMapLookupElem.Call())
	a.emit(asm.JEq.Imm(asm.R0, 0, "out"))
	a.emit(asm.Mov.Imm(asm.R1, delta), atomicMem(asm.AddAtomic, asm.R0, asm.R1, 0))
}

// mmsgEnterProgram counts an mmsg call of direction d and marks its
// thread as inside it.
func (m bpfMaps) mmsgEnterProgram(d Dir) *builder {
	a := &builder{}
	m.lookupProc(a)
	m.eachWay(a, func(string) { addOne(a, socketIndex(d)) })
	a.emit(asm.FnGetCurrentPidTgid.Call(), asm.StoreMem(asm.RFP, tidSlot, asm.R0, asm.Word), asm.Mov.Imm(asm.R1, 1), asm.StoreMem(asm.RFP, markSlot, asm.R1, asm.Word))
	a.emit(mapPtr(asm.R1, m.inMmsg))
	a.emit(asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, tidSlot), asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, markSlot), asm.Mov.Imm(asm.R4, 0))
	a.emit(asm.FnMapUpdateElem.Call())
	a.emit(asm.JNE.Imm(asm.R0, 0, "out"))
	m.addMmsgs(a, 1)
	finish(a)
	return a
}

// mmsgExitProgram ends an mmsg call of direction d: its thread's mark
// goes, and an EAGAIN result (the record's 64-bit ret at retOffset)
// counts.
func (m bpfMaps) mmsgExitProgram(d Dir, retOffset int16) *builder {
	a := &builder{}
	a.emit(asm.Mov.Reg(asm.R6, asm.R1))
	m.lookupProc(a)
	a.emit(asm.FnGetCurrentPidTgid.Call(), asm.StoreMem(asm.RFP, tidSlot, asm.R0, asm.Word))
	a.emit(mapPtr(asm.R1, m.inMmsg))
	a.emit(asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, tidSlot))
	a.emit(asm.FnMapDeleteElem.Call())
	a.emit(asm.JNE.Imm(asm.R0, 0, "counted"))
	m.addMmsgs(a, -1)
	a.label("counted")
	a.emit(asm.LoadMem(asm.R1, asm.R6, retOffset, asm.DWord))
	a.emit(asm.JNE.Imm(asm.R1, eagainRet, "out"))
	m.eachWay(a, func(string) { addOne(a, socketEAGAINIndex(d)) })
	finish(a)
	return a
}

// checkSocketCounts is socketSet's self-check, in the slot s claimed for
// this process: on a non-blocking socketpair, three sends, a receive and
// a receive that fails with EAGAIN, and an eventfd's write and read
// between them, must count as exactly three send calls and two receive
// calls, one of them EAGAIN.
func checkSocketCounts(s *bpfSlot) error {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("the socket counters' self-check: %w", err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("the socket counters' self-check: %w", err)
	}
	defer unix.Close(efd)
	one, buf := []byte{1}, make([]byte, 8)
	for range 3 {
		unix.Write(pair[0], one)
	}
	unix.Write(efd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	unix.Read(efd, buf)
	unix.Read(pair[1], buf)
	unix.Read(pair[1], buf) // EAGAIN: drained
	v, err := s.read()
	if err != nil {
		return err
	}
	got := [4]uint64{v[socketIndex(Send)], v[socketIndex(Recv)], v[socketEAGAINIndex(Recv)], v[socketEAGAINIndex(Send)]}
	if got != [4]uint64{3, 2, 1, 0} {
		return fmt.Errorf("the socket counters saw %d sends, %d receives (%d EAGAIN) and %d send EAGAIN of this process, want 3, 2 (1) and 0 (another PID namespace?)",
			got[0], got[1], got[2], got[3])
	}
	return nil
}
