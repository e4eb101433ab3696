package syscount

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// The timer's fill programs (filltimer_linux.go):
//   - fill_tick, on a cpu-clock event of every CPU: for each slot in use
//     (a bounded loop, at most fillSlotMax, over the slots up to the
//     highest in use), the socket's level read where it stands and
//     counted: a sample, its bytes, and whether full or empty;
//   - fill_find, at the end of every send call (sock:sock_send_length):
//     a socket whose inode is watched gets its address written into its
//     slot, where the tick reads it; fill_iter (filltimeriter_linux.go)
//     writes it when the socket is watched.
//
// A slot is read through the socket's address, which a freed socket may
// leave to another: at every tick the address's inode must still be the
// slot's, or the slot loses its address (Lost) until its socket's next
// send call, and no other socket's level is ever counted for it.
//
// A loop over an array rather than bpf_for_each_map_elem over a hash:
// the array's lookups are inlined by the verifier, a tick touches only
// the slots up to the highest in use (Hi, one or two per side), and the
// loop needs no callback, which asm would write as a second function.

// fillSlot is a slot's value in the slots map.
type fillSlot struct {
	Sock      uint64 // the socket's struct sock, from its last send call; 0: not found yet
	Inode     uint64 // the socket's inode (0: the slot is free)
	Samples   uint64 // ticks that read its level
	Bytes     uint64 // the bytes in flight, summed over the samples
	Full      uint64 // samples at ≥ 90% of the limit
	Empty     uint64 // samples under 10% of the limit
	LastLevel uint64 // bytes in flight << 32 | limit, at the last sample
	Lost      uint64 // ticks that found another socket (or none) at Sock
}

// Offsets in fillSlot.
const (
	slotSock, slotInode, slotSamples, slotBytes  = 0, 8, 16, 24
	slotFull, slotEmpty, slotLastLevel, slotLost = 32, 40, 48, 56
	fillSlotSize                                 = 64
)

// The meta map's u64s: the slots in use end before Hi (user space sets
// it); Ticks counts fill_tick's runs, Finds fill_find's on a watched
// socket (TestFillTimerCostFlat), IterFinds the watched sockets fill_iter
// found.
const (
	metaHi, metaTicks, metaFinds, metaIterFinds = 0, 1, 2, 3
	metaEntries                                 = 4
)

// fillTimerMaps: slots (u32 -> fillSlot), inodes (inode u64 -> its slot,
// u32), meta (u32 -> u64).
type fillTimerMaps struct{ slots, inodes, meta *ebpf.Map }

// hiSlot is where fill_tick keeps Hi on its stack.
const hiSlot = -64

// metaLookup emits: r0 = the meta u64 at key; out when missing.
func metaLookup(a *builder, m *ebpf.Map, key int32) {
	a.emit(asm.Mov.Imm(asm.R1, key), asm.StoreMem(asm.RFP, fillOneSlot, asm.R1, asm.Word))
	a.emit(mapPtr(asm.R1, m), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, fillOneSlot), asm.FnMapLookupElem.Call())
	a.emit(asm.JEq.Imm(asm.R0, 0, "out"))
}

// metaCount emits: the meta u64 at key grows by one.
func metaCount(a *builder, m *ebpf.Map, key int32) {
	metaLookup(a, m, key)
	a.emit(asm.Mov.Imm(asm.R1, 1), atomicMem(asm.AddAtomic, asm.R0, asm.R1, 0))
}

// fillTickProgram reads every slot's socket at a tick.
func fillTickProgram(o fillOffsets, m fillTimerMaps) *builder {
	a := &builder{}
	metaLookup(a, m.meta, metaHi)
	a.emit(asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord), asm.StoreMem(asm.RFP, hiSlot, asm.R1, asm.DWord))
	metaCount(a, m.meta, metaTicks)
	a.emit(asm.Mov.Imm(asm.R6, 0))
	a.label("loop")
	a.emit(asm.JGE.Imm(asm.R6, fillSlotMax, "out"), asm.LoadMem(asm.R1, asm.RFP, hiSlot, asm.DWord), asm.JGE.Reg(asm.R6, asm.R1, "out"))
	a.emit(asm.StoreMem(asm.RFP, fillOneSlot, asm.R6, asm.Word))
	a.emit(mapPtr(asm.R1, m.slots), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, fillOneSlot), asm.FnMapLookupElem.Call())
	a.emit(asm.JEq.Imm(asm.R0, 0, "next"), asm.Mov.Reg(asm.R9, asm.R0))
	a.emit(asm.LoadMem(asm.R7, asm.R9, slotSock, asm.DWord), asm.JEq.Imm(asm.R7, 0, "next"))
	// Still the slot's socket: its inode is the slot's.
	probeRead(a, fillSocketSlot, 8, asm.R7, o.skSocket)
	a.emit(asm.JNE.Imm(asm.R0, 0, "lost"), asm.LoadMem(asm.R1, asm.RFP, fillSocketSlot, asm.DWord), asm.JEq.Imm(asm.R1, 0, "lost"))
	probeRead(a, fillInodeSlot, 8, asm.R1, o.inodeOfSocket)
	a.emit(asm.JNE.Imm(asm.R0, 0, "lost"), asm.LoadMem(asm.R1, asm.RFP, fillInodeSlot, asm.DWord))
	a.emit(asm.LoadMem(asm.R2, asm.R9, slotInode, asm.DWord), asm.JNE.Reg(asm.R1, asm.R2, "lost"))
	fillLevel(a, o, false)
	tickCount(a)
	a.emit(asm.Ja.Label("next"))
	a.label("lost")
	a.emit(asm.Mov.Imm(asm.R1, 0), asm.StoreMem(asm.R9, slotSock, asm.R1, asm.DWord))
	a.emit(asm.Mov.Imm(asm.R1, 1), atomicMem(asm.AddAtomic, asm.R9, asm.R1, slotLost))
	a.label("next")
	a.emit(asm.Add.Imm(asm.R6, 1), asm.Ja.Label("loop"))
	a.label("out")
	a.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	return a
}

// tickCount emits: the level r8 (bytes << 32 | limit) counted in the
// slot at r9, then on to "next".
func tickCount(a *builder) {
	a.emit(asm.StoreMem(asm.R9, slotLastLevel, asm.R8, asm.DWord))
	a.emit(asm.Mov.Imm(asm.R1, 1), atomicMem(asm.AddAtomic, asm.R9, asm.R1, slotSamples))
	a.emit(asm.Mov.Reg(asm.R3, asm.R8), asm.RSh.Imm(asm.R3, 32), asm.Mov.Reg(asm.R4, asm.R8), asm.LSh.Imm(asm.R4, 32), asm.RSh.Imm(asm.R4, 32))
	a.emit(atomicMem(asm.AddAtomic, asm.R9, asm.R3, slotBytes), asm.JEq.Imm(asm.R4, 0, "next"))
	a.emit(asm.Mov.Reg(asm.R5, asm.R3), asm.Mul.Imm(asm.R5, 10), asm.Mov.Reg(asm.R0, asm.R4), asm.Mul.Imm(asm.R0, fillFullTenths))
	a.emit(asm.JLT.Reg(asm.R5, asm.R0, "notfull"), asm.Mov.Imm(asm.R1, 1), atomicMem(asm.AddAtomic, asm.R9, asm.R1, slotFull))
	a.label("notfull")
	a.emit(asm.Mov.Reg(asm.R0, asm.R4), asm.Mul.Imm(asm.R0, fillEmptyTenths))
	a.emit(asm.JGE.Reg(asm.R5, asm.R0, "next"), asm.Mov.Imm(asm.R1, 1), atomicMem(asm.AddAtomic, asm.R9, asm.R1, slotEmpty))
}

// watchedSlot emits the lookup both finders share: from the struct sock
// in R7 to its socket's inode, and from a watched inode to its slot, left
// in R0; a socket that is not watched (or unreadable) jumps to "out".
func watchedSlot(a *builder, o fillOffsets, m fillTimerMaps) {
	probeRead(a, fillSocketSlot, 8, asm.R7, o.skSocket)
	a.emit(asm.JNE.Imm(asm.R0, 0, "out"), asm.LoadMem(asm.R1, asm.RFP, fillSocketSlot, asm.DWord), asm.JEq.Imm(asm.R1, 0, "out"))
	probeRead(a, fillInodeSlot, 8, asm.R1, o.inodeOfSocket)
	a.emit(asm.JNE.Imm(asm.R0, 0, "out"))
	a.emit(mapPtr(asm.R1, m.inodes), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, fillInodeSlot), asm.FnMapLookupElem.Call())
	a.emit(asm.JEq.Imm(asm.R0, 0, "out"), asm.LoadMem(asm.R1, asm.R0, 0, asm.Word), asm.StoreMem(asm.RFP, fillOneSlot, asm.R1, asm.Word))
	a.emit(mapPtr(asm.R1, m.slots), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, fillOneSlot), asm.FnMapLookupElem.Call())
	a.emit(asm.JEq.Imm(asm.R0, 0, "out"))
}

// fillFindProgram, at the end of each send call: a watched socket's
// address into its slot. rec says where the tracepoint's record holds
// the socket and its family (raw: the first argument, no family).
func fillFindProgram(o fillOffsets, rec fillRecord, m fillTimerMaps) *builder {
	a := &builder{}
	loadSock(a, rec)
	watchedSlot(a, o, m)
	a.emit(asm.Mov.Reg(asm.R9, asm.R0))
	// Written only when it changed: the tick reads the slot on every
	// CPU, and a store at every send would move its cache line.
	a.emit(asm.LoadMem(asm.R1, asm.R9, slotSock, asm.DWord), asm.JEq.Reg(asm.R1, asm.R7, "found"), asm.StoreMem(asm.R9, slotSock, asm.R7, asm.DWord))
	a.label("found")
	metaCount(a, m.meta, metaFinds)
	return finishFill(a)
}
