package syscount

import "fmt"

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
type bpfMaps struct{ procs, socks, counts, inMmsg, mmsgs, bits, forkBits int }

// bitWords is how many u64s bits and forkBits hold.
const bitWords = 1024

// bitKeySlot is where lookupProc keeps a bits key.
const bitKeySlot = -64

// lookupProc emits: the caller's tgid looked up in procs, unless its bit
// is clear in both bit maps; not counted jumps to "out"; else r9 points
// at its ways. It uses r7.
func (m bpfMaps) lookupProc(a *asm) {
	a.emit(callHelper(helperGetCurrentPidTgid), aluImm(aluRSH, r0, 32), store(sizeW, r10, -4, r0))
	a.emit(aluImm(aluRSH, r0, 6), aluImm(aluAND, r0, bitWords-1), store(sizeW, r10, bitKeySlot, r0))
	a.emit(movImm(r7, 0))
	for _, bits := range []int{m.bits, m.forkBits} {
		a.emit(movReg(r2, r10), aluImm(aluADD, r2, bitKeySlot))
		a.emit(loadMap(r1, bits)...)
		a.emit(callHelper(helperMapLookupElem))
		a.jumpTo(jmpJEQ, r0, 0, "out")
		a.emit(load(sizeDW, r1, r0, 0), aluReg(aluOR, r7, r1))
	}
	a.emit(load(sizeW, r2, r10, -4), aluImm(aluAND, r2, 63), aluReg(aluRSH, r7, r2), aluImm(aluAND, r7, 1))
	a.jumpTo(jmpJEQ, r7, 0, "out")
	a.emit(movReg(r2, r10), aluImm(aluADD, r2, -4))
	a.emit(loadMap(r1, m.procs)...)
	a.emit(callHelper(helperMapLookupElem))
	a.jumpTo(jmpJEQ, r0, 0, "out")
	a.emit(movReg(r9, r0))
}

// eachWay emits body once per way, with r7 the way's slot and r8 its
// counts; a free way, or one whose counts are missing, skips to the
// next. body may jump to next to end its way early.
func (m bpfMaps) eachWay(a *asm, body func(next string)) {
	for w := range bpfWays {
		next := fmt.Sprintf("way%d", w+1)
		a.emit(load(sizeW, r7, r9, int16(4*w)))
		a.jumpTo(jmpJEQ, r7, 0, next)
		a.emit(aluImm(aluAND, r7, bpfSlotMask), aluImm(aluADD, r7, -1), store(sizeW, r10, -8, r7))
		a.emit(movReg(r2, r10), aluImm(aluADD, r2, -8))
		a.emit(loadMap(r1, m.counts)...)
		a.emit(callHelper(helperMapLookupElem))
		a.jumpTo(jmpJEQ, r0, 0, next)
		a.emit(movReg(r8, r0))
		body(next)
		a.label(next)
	}
}

// addOne emits: the u64 at r8 + 8*index grows by one.
func addOne(a *asm, index int16) {
	a.emit(movImm(r1, 1), atomicAdd(r8, 8*index, r1))
}

// finish ends a program returning 1: the kernel then hands the call on
// to the perf events on the same tracepoint (a user's `perf stat -e
// syscalls:…`, a PerThread Counter). Returning 0 would hide every call
// from them (kernel/trace/trace_syscalls.c, perf_syscall_enter).
func finish(a *asm) {
	a.label("out")
	a.emit(movImm(r0, 1), exitInsn())
}

// fdSlot is where enterProgram keeps the call's fd, below the keys of
// lookupProc (-4: the tgid), eachWay (-8: the slot) and countEntry
// (-24..-9: a socks key).
const fdSlot = -56

// enterProgram counts an entry to s, on its own tracepoint: its first
// argument, the fd, is at fdOffset in the tracepoint's record.
func (m bpfMaps) enterProgram(s Syscall, fdOffset int16) *asm {
	a := &asm{}
	a.emit(movReg(r6, r1))
	m.lookupProc(a)
	a.emit(load(sizeDW, r1, r6, fdOffset), store(sizeDW, r10, fdSlot, r1))
	m.countEntry(a, s)
	finish(a)
	return a
}

// countEntry emits, for each Counter of the caller's process (r9: its
// ways), one entry to s on any fd, and one on the counted fds when the fd
// at fdSlot is one of the Counter's.
func (m bpfMaps) countEntry(a *asm, s Syscall) {
	m.eachWay(a, func(next string) {
		addOne(a, anyIndex(s))
		// The key {slot, tgid, fd, 0} at r10-24; the tgid is at r10-4.
		counted := next + "fd"
		a.emit(store(sizeW, r10, -24, r7), load(sizeW, r1, r10, -4), store(sizeW, r10, -20, r1))
		a.emit(load(sizeDW, r1, r10, fdSlot), store(sizeW, r10, -16, r1), movImm(r1, 0), store(sizeW, r10, -12, r1))
		m.lookupSock(a)
		a.jumpTo(jmpJNE, r0, 0, counted)
		// Not this process's: one of the fds counted in any of them?
		a.emit(movImm(r1, 0), store(sizeW, r10, -20, r1))
		m.lookupSock(a)
		a.jumpTo(jmpJEQ, r0, 0, next)
		a.label(counted)
		addOne(a, onFDsIndex(s))
	})
}

// lookupSock emits the lookup of the key at r10-24 in socks.
func (m bpfMaps) lookupSock(a *asm) {
	a.emit(movReg(r2, r10), aluImm(aluADD, r2, -24))
	a.emit(loadMap(r1, m.socks)...)
	a.emit(callHelper(helperMapLookupElem))
}

// exitProgram counts an exit from s that failed with EAGAIN (its return
// value at retOffset). The fd is not in the exit's record, as with perf's
// filters: Count.EAGAIN bounds which fds they were on.
func (m bpfMaps) exitProgram(s Syscall, retOffset int16) *asm {
	a := &asm{}
	a.emit(movReg(r6, r1), load(sizeDW, r1, r6, retOffset))
	a.jumpTo(jmpJNE, r1, eagainRet, "out")
	m.lookupProc(a)
	m.eachWay(a, func(string) { addOne(a, eagainIndex(s)) })
	finish(a)
	return a
}

// forkProgram, on task:task_newtask, enters a new process (not a thread:
// threads share their tgid) for those of its creator's Counters that
// count children. It runs in the creator before the child can run, so
// none of the child's calls is missed.
func (m bpfMaps) forkProgram(pidOffset, flagsOffset int16) *asm {
	a := &asm{}
	a.emit(movReg(r6, r1), load(sizeDW, r1, r6, flagsOffset), aluImm(aluAND, r1, cloneThread))
	a.jumpTo(jmpJNE, r1, 0, "out")
	m.lookupProc(a)
	// The child's ways, at r10-32: the creator's that count children.
	a.emit(movImm(r8, 0))
	for w := range bpfWays {
		keep := fmt.Sprintf("keep%d", w)
		a.emit(load(sizeW, r7, r9, int16(4*w)), movReg(r1, r7), aluImm(aluAND, r1, bpfChildrenBit))
		a.jumpTo(jmpJNE, r1, 0, keep)
		a.emit(movImm(r7, 0))
		a.label(keep)
		a.emit(store(sizeW, r10, int16(-32+4*w), r7), aluReg(aluOR, r8, r7))
	}
	a.jumpTo(jmpJEQ, r8, 0, "out")
	a.emit(load(sizeW, r1, r6, pidOffset), store(sizeW, r10, -36, r1))
	// The child's bit first, so that no call it makes finds it clear.
	a.emit(aluImm(aluRSH, r1, 6), aluImm(aluAND, r1, bitWords-1), store(sizeW, r10, bitKeySlot, r1))
	a.emit(movReg(r2, r10), aluImm(aluADD, r2, bitKeySlot))
	a.emit(loadMap(r1, m.forkBits)...)
	a.emit(callHelper(helperMapLookupElem))
	a.jumpTo(jmpJEQ, r0, 0, "out")
	a.emit(load(sizeW, r2, r10, -36), aluImm(aluAND, r2, 63), movImm(r1, 1), aluReg(aluLSH, r1, r2), atomicOr(r0, 0, r1))
	a.emit(loadMap(r1, m.procs)...)
	a.emit(movReg(r2, r10), aluImm(aluADD, r2, -36), movReg(r3, r10), aluImm(aluADD, r3, -32), movImm(r4, 0))
	a.emit(callHelper(helperMapUpdateElem))
	finish(a)
	return a
}
