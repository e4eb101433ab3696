package syscount

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// The counting programs, one per tracepoint. Each runs in the kernel at
// every entry to (or exit from) its system call, by any process, and
// counts the call only when the caller's process (its tgid) is one a
// Counter counts. That costs every caller a hash lookup (tens of
// nanoseconds) and the counted ones two or three, but nothing at a
// context switch: unlike perf counters, which the kernel moves on and off
// the CPU with every counted thread at each switch (Counter's comment).
//
// The maps the programs share:
//   - procs: tgid (u32) -> bpfWays u32s, the Counters that count the
//     process (up to bpfWays at once: two sides on one --target server,
//     a test beside the tool): each slot+1 in the low 16 bits (0: a free
//     way), bpfChildrenBit set when the processes it starts count too;
//   - socks: {slot, tgid, fd, 0} (four u32s) -> 1, the fds each slot
//     counts on: in that process, or (tgid 0) in any process it counts;
//   - counts: slot (u32) -> bpfSlotValues u64s, per CPU, only ever added
//     to (atomically: a syscall tracepoint may run preemptible);
//   - inMmsg: thread id (u32) -> 1 while a counted thread is inside a
//     recvmmsg or sendmmsg call, and mmsgs (one u64) how many are
//     (bpfsock_linux.go);
//   - bits and forkBits: 1024 u64s, 65536 bits, a bit for each tgid modulo
//     65536 that may be in procs, set by this process (bits) and by the
//     fork program (forkBits, atomically: two maps, so that neither's
//     writes can undo the other's). A caller whose bit is clear is not
//     counted, which the programs learn from an array read instead of a
//     hash lookup: that is every caller of the counted calls on the
//     machine but the few counted. Bits are only ever set while the
//     programs are loaded: one left by a process that has gone costs a
//     hash lookup, never a missed call.

const (
	bpfMaxSlots    = 64
	bpfWays        = 4
	bpfSlotMask    = 0xffff
	bpfChildrenBit = 1 << 16
	// bpfSlotValues: per call, its entries on any fd, its exits with
	// EAGAIN, its entries on the counted fds; then per direction, its
	// socket calls and those that failed with EAGAIN (Options.Sockets).
	bpfSlotValues = 3*int(NumSyscalls) + 4
	// cloneThread is CLONE_THREAD: a new thread, not a new process.
	cloneThread = 0x10000
	// eagainRet is -EAGAIN, a failed call's return value at sys_exit.
	eagainRet = -11
)

func anyIndex(s Syscall) int16    { return int16(3 * s) }
func eagainIndex(s Syscall) int16 { return int16(3*s + 1) }
func onFDsIndex(s Syscall) int16  { return int16(3*s + 2) }

func socketIndex(d Dir) int16       { return int16(3*NumSyscalls) + int16(2*d) }
func socketEAGAINIndex(d Dir) int16 { return socketIndex(d) + 1 }

// bpfMaps are the fds of the maps.
type bpfMaps struct{ procs, socks, counts, inMmsg, mmsgs, bits, forkBits *ebpf.Map }

// bitWords is how many u64s bits and forkBits hold.
const bitWords = 1024

// bitKeySlot is where lookupProc keeps a bits key.
const bitKeySlot = -64

// lookupProc emits: the caller's tgid looked up in procs, unless its bit
// is clear in both bit maps; not counted jumps to "out"; else r9 points
// at its ways. It uses r7.
func (m bpfMaps) lookupProc(a *builder) {
	a.emit(asm.FnGetCurrentPidTgid.Call(), asm.RSh.Imm(asm.R0, 32), asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word))
	a.emit(asm.RSh.Imm(asm.R0, 6), asm.And.Imm(asm.R0, bitWords-1), asm.StoreMem(asm.RFP, bitKeySlot, asm.R0, asm.Word))
	a.emit(asm.Mov.Imm(asm.R7, 0))
	for _, bits := range []*ebpf.Map{m.bits, m.forkBits} {
		a.emit(asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, bitKeySlot))
		a.emit(mapPtr(asm.R1, bits))
		a.emit(asm.FnMapLookupElem.Call())
		a.emit(asm.JEq.Imm(asm.R0, 0, "out"))
		a.emit(asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord), asm.Or.Reg(asm.R7, asm.R1))
	}
	a.emit(asm.LoadMem(asm.R2, asm.RFP, -4, asm.Word), asm.And.Imm(asm.R2, 63), asm.RSh.Reg(asm.R7, asm.R2), asm.And.Imm(asm.R7, 1))
	a.emit(asm.JEq.Imm(asm.R7, 0, "out"))
	a.emit(asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -4))
	a.emit(mapPtr(asm.R1, m.procs))
	a.emit(asm.FnMapLookupElem.Call())
	a.emit(asm.JEq.Imm(asm.R0, 0, "out"))
	a.emit(asm.Mov.Reg(asm.R9, asm.R0))
}

// eachWay emits body once per way, with r7 the way's slot and r8 its
// counts; a free way, or one whose counts are missing, skips to the
// next. body may jump to next to end its way early.
func (m bpfMaps) eachWay(a *builder, body func(next string)) {
	for w := range bpfWays {
		next := fmt.Sprintf("way%d", w+1)
		a.emit(asm.LoadMem(asm.R7, asm.R9, int16(4*w), asm.Word))
		a.emit(asm.JEq.Imm(asm.R7, 0, next))
		a.emit(asm.And.Imm(asm.R7, bpfSlotMask), asm.Add.Imm(asm.R7, -1), asm.StoreMem(asm.RFP, -8, asm.R7, asm.Word))
		a.emit(asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -8))
		a.emit(mapPtr(asm.R1, m.counts))
		a.emit(asm.FnMapLookupElem.Call())
		a.emit(asm.JEq.Imm(asm.R0, 0, next))
		a.emit(asm.Mov.Reg(asm.R8, asm.R0))
		body(next)
		a.label(next)
	}
}

// addOne emits: the u64 at r8 + 8*index grows by one.
func addOne(a *builder, index int16) {
	a.emit(asm.Mov.Imm(asm.R1, 1), atomicMem(asm.AddAtomic, asm.R8, asm.R1, 8*index))
}

// finish ends a program returning 1: the kernel then hands the call on
// to the perf events on the same tracepoint (a user's `perf stat -e
// syscalls:…`, a PerThread Counter). Returning 0 would hide every call
// from them (kernel/trace/trace_syscalls.c, perf_syscall_enter).
func finish(a *builder) {
	a.label("out")
	a.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
}

// fdSlot is where enterProgram keeps the call's fd, below the keys of
// lookupProc (-4: the tgid), eachWay (-8: the slot) and countEntry
// (-24..-9: a socks key).
const fdSlot = -56

// enterProgram counts an entry to s, on its own tracepoint: its first
// argument, the fd, is at fdOffset in the tracepoint's record.
func (m bpfMaps) enterProgram(s Syscall, fdOffset int16) *builder {
	a := &builder{}
	a.emit(asm.Mov.Reg(asm.R6, asm.R1))
	m.lookupProc(a)
	a.emit(asm.LoadMem(asm.R1, asm.R6, fdOffset, asm.DWord), asm.StoreMem(asm.RFP, fdSlot, asm.R1, asm.DWord))
	m.countEntry(a, s)
	finish(a)
	return a
}

// countEntry emits, for each Counter of the caller's process (r9: its
// ways), one entry to s on any fd, and one on the counted fds when the fd
// at fdSlot is one of the Counter's.
func (m bpfMaps) countEntry(a *builder, s Syscall) {
	m.eachWay(a, func(next string) {
		addOne(a, anyIndex(s))
		// The key {slot, tgid, fd, 0} at r10-24; the tgid is at r10-4.
		counted := next + "fd"
		a.emit(asm.StoreMem(asm.RFP, -24, asm.R7, asm.Word), asm.LoadMem(asm.R1, asm.RFP, -4, asm.Word), asm.StoreMem(asm.RFP, -20, asm.R1, asm.Word))
		a.emit(asm.LoadMem(asm.R1, asm.RFP, fdSlot, asm.DWord), asm.StoreMem(asm.RFP, -16, asm.R1, asm.Word), asm.Mov.Imm(asm.R1, 0), asm.StoreMem(asm.RFP, -12, asm.R1, asm.Word))
		m.lookupSock(a)
		a.emit(asm.JNE.Imm(asm.R0, 0, counted))
		// Not this process's: one of the fds counted in any of them?
		a.emit(asm.Mov.Imm(asm.R1, 0), asm.StoreMem(asm.RFP, -20, asm.R1, asm.Word))
		m.lookupSock(a)
		a.emit(asm.JEq.Imm(asm.R0, 0, next))
		a.label(counted)
		addOne(a, onFDsIndex(s))
	})
}

// lookupSock emits the lookup of the key at r10-24 in socks.
func (m bpfMaps) lookupSock(a *builder) {
	a.emit(asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -24))
	a.emit(mapPtr(asm.R1, m.socks))
	a.emit(asm.FnMapLookupElem.Call())
}

// exitProgram counts an exit from s that failed with EAGAIN (its return
// value at retOffset). The fd is not in the exit's record, as with perf's
// filters: Count.EAGAIN bounds which fds they were on.
func (m bpfMaps) exitProgram(s Syscall, retOffset int16) *builder {
	a := &builder{}
	a.emit(asm.Mov.Reg(asm.R6, asm.R1), asm.LoadMem(asm.R1, asm.R6, retOffset, asm.DWord))
	a.emit(asm.JNE.Imm(asm.R1, eagainRet, "out"))
	m.lookupProc(a)
	m.eachWay(a, func(string) { addOne(a, eagainIndex(s)) })
	finish(a)
	return a
}

// forkProgram, on task:task_newtask, enters a new process (not a thread:
// threads share their tgid) for those of its creator's Counters that
// count children. It runs in the creator before the child can run, so
// none of the child's calls is missed.
func (m bpfMaps) forkProgram(pidOffset, flagsOffset int16) *builder {
	a := &builder{}
	a.emit(asm.Mov.Reg(asm.R6, asm.R1), asm.LoadMem(asm.R1, asm.R6, flagsOffset, asm.DWord), asm.And.Imm(asm.R1, cloneThread))
	a.emit(asm.JNE.Imm(asm.R1, 0, "out"))
	m.lookupProc(a)
	// The child's ways, at r10-32: the creator's that count children.
	a.emit(asm.Mov.Imm(asm.R8, 0))
	for w := range bpfWays {
		keep := fmt.Sprintf("keep%d", w)
		a.emit(asm.LoadMem(asm.R7, asm.R9, int16(4*w), asm.Word), asm.Mov.Reg(asm.R1, asm.R7), asm.And.Imm(asm.R1, bpfChildrenBit))
		a.emit(asm.JNE.Imm(asm.R1, 0, keep))
		a.emit(asm.Mov.Imm(asm.R7, 0))
		a.label(keep)
		a.emit(asm.StoreMem(asm.RFP, int16(-32+4*w), asm.R7, asm.Word), asm.Or.Reg(asm.R8, asm.R7))
	}
	a.emit(asm.JEq.Imm(asm.R8, 0, "out"))
	a.emit(asm.LoadMem(asm.R1, asm.R6, pidOffset, asm.Word), asm.StoreMem(asm.RFP, -36, asm.R1, asm.Word))
	// The child's bit first, so that no call it makes finds it clear.
	a.emit(asm.RSh.Imm(asm.R1, 6), asm.And.Imm(asm.R1, bitWords-1), asm.StoreMem(asm.RFP, bitKeySlot, asm.R1, asm.Word))
	a.emit(asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, bitKeySlot))
	a.emit(mapPtr(asm.R1, m.forkBits))
	a.emit(asm.FnMapLookupElem.Call())
	a.emit(asm.JEq.Imm(asm.R0, 0, "out"))
	a.emit(asm.LoadMem(asm.R2, asm.RFP, -36, asm.Word), asm.And.Imm(asm.R2, 63), asm.Mov.Imm(asm.R1, 1), asm.LSh.Reg(asm.R1, asm.R2), atomicMem(asm.OrAtomic, asm.R0, asm.R1, 0))
	a.emit(mapPtr(asm.R1, m.procs))
	a.emit(asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -36), asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, -32), asm.Mov.Imm(asm.R4, 0))
	a.emit(asm.FnMapUpdateElem.Call())
	finish(a)
	return a
}
