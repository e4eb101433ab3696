package syscount

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// The fill programs, on tracepoints. Each runs where a unix sender's
// level changes, reads its bytes in flight and its limit, and adds the
// levels since the previous change to the sender's sums (fillStats):
//   - sock:sk_data_ready, when the sender has queued an skb on its
//     reader (unix_stream_sendmsg, once per skb, the buffer charged with
//     it; blocked while the buffer is full, it queues none);
//   - skb:consume_skb, as the reader frees an skb it has read whole,
//     whose destructor (sock_wfree) then releases skb->truesize;
//   - sock:sock_send_length, at the end of every send call, which also
//     enters a watched socket in sks, so that the two above look it up
//     cheaply.
//
// A release is seen as it happens; a charge is not. unix_stream_sendmsg
// charges an skb when it allocates it (sock_alloc_send_pskb), then copies
// the caller's data in and only then queues it, and no tracepoint marks
// the allocation (this kernel has no kprobes and refuses fentry). Read at
// the queue alone, every rise came a copy late: at an 8 KiB buffer, full
// for about a copy at a time, full % read 6-8 points under a timer
// reading the level (FillReference, a test's) and 14 under the sampler.
// So the queued program dates each rise back (fillBackdate): after the
// same sender's previous skb queued, to it, less the mean overhead of
// going on (the sender allocates its next skb as soon as it has queued
// one, unless the buffer is full, and then it waits for a release,
// which is a change); after any other change (the first skb of a send
// call, or the first after waiting for room), by the bytes charged at
// the copy rate, which the released program measures from skbs read
// whole back to back (fillCopyTime). Either is an estimate, never the
// allocation seen: against the timer, 8 KiB full 1.0-5.6 points over and
// empty within 3.7; in the pair at its 208k default, full 0.9-5.0 and
// empty 0.3-4.3 under, the mean bytes within 2% (bench/README).
//
// Two changes at the same instant on two CPUs can pair one's time with
// the other's level.
//
// TCP is not measured here: its level (sk_wmem_queued) falls when
// acknowledgements arrive, in softirq, which no tracepoint shows; the
// sampler measures it.
//
// Whether a socket is watched is decided by its inode (what /proc and
// sock_diag name it by), read from its struct socket at every event: sks
// only filters, so a socket freed and another made at its address costs
// two reads, never a wrong figure.

// fillStats is a watched socket's value in watch; the programs update it
// with atomic instructions, which keep every sum whole.
type fillStats struct {
	LastNS    uint64 // bpf_ktime_get_ns (CLOCK_MONOTONIC) of the last change; 0: none yet
	LastLevel uint64 // bytes in flight << 32 | limit, after the last change
	TotalNS   uint64 // time integrated
	BytesNS   uint64 // bytes in flight × ns
	FullNS    uint64 // time at ≥ 90% of the limit
	EmptyNS   uint64 // time under 10% of the limit
	Events    uint64 // the intervals added
	LastKind  uint64 // which program saw the last change (fillKind…)
	CopyRate  uint64 // ns per KiB a reader takes to read an skb whole, averaged
	Overhead  uint64 // ns from one skb queued to the next one's charge, averaged
}

// Offsets in fillStats.
const (
	fillLastNS, fillLastLevel, fillTotalNS, fillBytesNS = 0, 8, 16, 24
	fillFullNS, fillEmptyNS, fillEvents, fillLastKind   = 32, 40, 48, 56
	fillCopyRate, fillOverhead, fillStatsSize           = 64, 72, 80
)

// What saw a change: fillKindQueued an skb queued, the others the end of
// a send call and an skb released.
const (
	fillKindQueued   = 1
	fillKindSent     = 2
	fillKindReleased = 3
)

// fillMaps: watch (inode u64 -> fillStats, entered from user space) and
// sks (struct sock address u64 -> 1), entered by the send program.
type fillMaps struct{ watch, sks *ebpf.Map }

// fillRecord is where sock:sock_send_length's and sock:sk_data_ready's
// records hold the socket (void *sk, void *skaddr) and its family (__u16),
// and skb:consume_skb's the skb (void *skbaddr, at sk). A raw
// tracepoint's program gets the tracepoint's arguments instead, the
// socket or skb first (sk 0), and no family (noFamily): a socket of
// another family is never watched, and is left out by the look-ups.
type fillRecord struct{ sk, family int16 }

// noFamily is a record without a family.
const noFamily = -1

// loadSock emits: r6 = the context, r7 = the socket (or skb), and out
// unless it is one of a unix socket.
func loadSock(a *builder, rec fillRecord) {
	a.emit(asm.Mov.Reg(asm.R6, asm.R1), asm.LoadMem(asm.R7, asm.R6, rec.sk, asm.DWord), asm.JEq.Imm(asm.R7, 0, "out"))
	if rec.family != noFamily {
		a.emit(asm.LoadMem(asm.R8, asm.R6, rec.family, asm.Half), asm.JNE.Imm(asm.R8, unix.AF_UNIX, "out"))
	}
}

// Stack slots of the fill programs.
const (
	fillSockSlot    = -8
	fillSocketSlot  = -16
	fillInodeSlot   = -24
	fillBytesSlot   = -32
	fillLimitSlot   = -40
	fillReleaseSlot = -48
	fillOneSlot     = -56
)

// probeRead emits bpf_probe_read_kernel(fp+slot, size, base+off); r0 is
// 0 when it read.
func probeRead(a *builder, slot int16, size int32, base asm.Register, off int32) {
	a.emit(asm.Mov.Reg(asm.R3, base), asm.Add.Imm(asm.R3, off), asm.Mov.Reg(asm.R1, asm.RFP), asm.Add.Imm(asm.R1, int32(slot)),
		asm.Mov.Imm(asm.R2, size), asm.FnProbeReadKernel.Call())
}

// fillSendProgram runs at the end of each send call.
func fillSendProgram(o fillOffsets, rec fillRecord, m fillMaps) *builder {
	a := &builder{}
	loadSock(a, rec)
	watchedStats(a, o, m)
	// Enter the socket in sks (a known one is entered again: cheaper
	// than a lookup first).
	a.emit(asm.StoreMem(asm.RFP, fillSockSlot, asm.R7, asm.DWord), asm.Mov.Imm(asm.R1, 1), asm.StoreMem(asm.RFP, fillOneSlot, asm.R1, asm.DWord))
	a.emit(mapPtr(asm.R1, m.sks), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, fillSockSlot),
		asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, fillOneSlot), asm.Mov.Imm(asm.R4, 0), asm.FnMapUpdateElem.Call())
	fillLevel(a, o, false)
	fillIntegrate(a, fillKindSent)
	return finishFill(a)
}

// fillQueuedProgram runs when a socket's reader is told data is ready:
// for a unix receiver, its peer (the sender) has just queued an skb.
func fillQueuedProgram(o fillOffsets, rec fillRecord, m fillMaps) *builder {
	a := &builder{}
	loadSock(a, rec)
	probeRead(a, fillSockSlot, 8, asm.R7, o.unixPeer)
	a.emit(asm.JNE.Imm(asm.R0, 0, "out"), asm.LoadMem(asm.R7, asm.RFP, fillSockSlot, asm.DWord), asm.JEq.Imm(asm.R7, 0, "out"))
	knownSock(a, m)
	watchedStats(a, o, m)
	fillLevel(a, o, false)
	fillIntegrate(a, fillKindQueued)
	return finishFill(a)
}

// fillReleaseProgram runs as an skb read whole is freed: its owner's
// level is what it is less skb->truesize, which its destructor is about
// to release.
func fillReleaseProgram(o fillOffsets, rec fillRecord, m fillMaps) *builder {
	a := &builder{}
	loadSock(a, fillRecord{sk: rec.sk, family: noFamily})
	a.emit(asm.Mov.Reg(asm.R6, asm.R7))
	probeRead(a, fillSockSlot, 8, asm.R6, o.skbSock)
	a.emit(asm.JNE.Imm(asm.R0, 0, "out"), asm.LoadMem(asm.R7, asm.RFP, fillSockSlot, asm.DWord), asm.JEq.Imm(asm.R7, 0, "out"))
	knownSock(a, m)
	a.emit(asm.Mov.Imm(asm.R1, 0), asm.StoreMem(asm.RFP, fillReleaseSlot, asm.R1, asm.DWord))
	probeRead(a, fillReleaseSlot, 4, asm.R6, o.skbTruesize)
	watchedStats(a, o, m)
	fillLevel(a, o, true)
	fillIntegrate(a, fillKindReleased)
	return finishFill(a)
}

// finishFill ends a fill program returning 1, as the counting ones do
// (finish), so that perf events on the same tracepoint still see it.
func finishFill(a *builder) *builder {
	a.label("out")
	a.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
	return a
}

// knownSock emits: out unless the socket at r7 is in sks.
func knownSock(a *builder, m fillMaps) {
	a.emit(asm.StoreMem(asm.RFP, fillSockSlot, asm.R7, asm.DWord))
	a.emit(mapPtr(asm.R1, m.sks), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, fillSockSlot), asm.FnMapLookupElem.Call())
	a.emit(asm.JEq.Imm(asm.R0, 0, "out"))
}

// watchedStats emits: r9 the fillStats of the socket at r7, by its
// inode; out when it is not watched.
func watchedStats(a *builder, o fillOffsets, m fillMaps) {
	probeRead(a, fillSocketSlot, 8, asm.R7, o.skSocket)
	a.emit(asm.JNE.Imm(asm.R0, 0, "out"), asm.LoadMem(asm.R1, asm.RFP, fillSocketSlot, asm.DWord), asm.JEq.Imm(asm.R1, 0, "out"))
	probeRead(a, fillInodeSlot, 8, asm.R1, o.inodeOfSocket)
	a.emit(asm.JNE.Imm(asm.R0, 0, "out"))
	a.emit(mapPtr(asm.R1, m.watch), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, fillInodeSlot), asm.FnMapLookupElem.Call())
	a.emit(asm.JEq.Imm(asm.R0, 0, "out"), asm.Mov.Reg(asm.R9, asm.R0))
}

// fillLevel emits: r8 = bytes in flight << 32 | limit, of the unix
// socket at r7 (sk_wmem_alloc less its 1, as sk_wmem_alloc_get reads
// it); with release, less the bytes at fillReleaseSlot. A failed read
// leaves 0 (the helper zeroes).
func fillLevel(a *builder, o fillOffsets, release bool) {
	probeRead(a, fillBytesSlot, 4, asm.R7, o.wmemAlloc)
	a.emit(asm.LoadMem(asm.R8, asm.RFP, fillBytesSlot, asm.Word), asm.JEq.Imm(asm.R8, 0, "limit"), asm.Add.Imm(asm.R8, -1))
	if release {
		a.emit(asm.LoadMem(asm.R1, asm.RFP, fillReleaseSlot, asm.DWord), asm.Mov.Reg(asm.R2, asm.R8), asm.Mov.Imm(asm.R8, 0))
		a.emit(asm.JLT.Reg(asm.R2, asm.R1, "limit"), asm.Mov.Reg(asm.R8, asm.R2), asm.Sub.Reg(asm.R8, asm.R1))
	}
	a.label("limit")
	probeRead(a, fillLimitSlot, 4, asm.R7, o.sndbuf)
	a.emit(asm.LoadMem(asm.R1, asm.RFP, fillLimitSlot, asm.Word), asm.LSh.Imm(asm.R8, 32), asm.Or.Reg(asm.R8, asm.R1))
}

// fillIntegrate emits: the change r8 (the new level) seen by kind, added
// to r9's sums. The previous change's time, level and kind are swapped
// out for now's; r6 = the time since it. The queued program dates a rise
// back (fillBackdate) into r7, the time at the new level; the rest of
// the interval holds the previous level.
func fillIntegrate(a *builder, kind int32) {
	a.emit(asm.FnKtimeGetNs.Call(), asm.Mov.Reg(asm.R6, asm.R0), asm.Mov.Reg(asm.R1, asm.R0))
	a.emit(atomicMem(asm.Xchg, asm.R9, asm.R1, fillLastNS), asm.Mov.Reg(asm.R2, asm.R8), atomicMem(asm.Xchg, asm.R9, asm.R2, fillLastLevel))
	a.emit(asm.Mov.Imm(asm.R3, kind), atomicMem(asm.Xchg, asm.R9, asm.R3, fillLastKind))
	a.emit(asm.JEq.Imm(asm.R1, 0, "out"), asm.Sub.Reg(asm.R6, asm.R1), asm.JSLE.Imm(asm.R6, 0, "out"))
	a.emit(asm.Mov.Imm(asm.R1, 1), atomicMem(asm.AddAtomic, asm.R9, asm.R1, fillEvents))
	a.emit(asm.Mov.Imm(asm.R7, 0))
	switch kind {
	case fillKindQueued:
		fillBackdate(a)
	case fillKindReleased:
		fillCopyTime(a)
	}
	a.emit(asm.Mov.Reg(asm.R1, asm.R6), asm.Sub.Reg(asm.R1, asm.R7))
	fillAdd(a, asm.R2, asm.R1, "held")
	fillAdd(a, asm.R8, asm.R7, "new")
}

// fillBackdate emits: r7 = how long before now the rise from r2 to r8
// (levels) was charged, at most the interval r6. After another change
// (r3, its kind, not an skb queued), the bytes charged at the copy rate
// (CopyRate). After the same sender's previous skb queued, the sender
// went straight on to charge this one: the interval less what going on
// takes (the rest of sk_data_ready, which wakes the reader, and the
// allocation), Overhead, the interval less the rate's estimate on
// average. The rate alone read full % at 8 KiB up to 11 points low under
// load (a copy interrupted is charge time the rate does not know); the
// interval less the least overhead seen, up to 7 high, and empty % in the
// pair 6-9 points low; halfway between the two, up to 17 low.
func fillBackdate(a *builder) {
	a.emit(asm.Mov.Reg(asm.R4, asm.R8), asm.RSh.Imm(asm.R4, 32), asm.Mov.Reg(asm.R5, asm.R2), asm.RSh.Imm(asm.R5, 32))
	a.emit(asm.JLE.Reg(asm.R4, asm.R5, "dated"), asm.Sub.Reg(asm.R4, asm.R5))
	a.emit(asm.LoadMem(asm.R7, asm.R9, fillCopyRate, asm.DWord), asm.Mul.Reg(asm.R7, asm.R4), asm.RSh.Imm(asm.R7, 10))
	a.emit(asm.JLE.Reg(asm.R7, asm.R6, "capped"), asm.Mov.Reg(asm.R7, asm.R6))
	a.label("capped")
	a.emit(asm.JNE.Imm(asm.R3, fillKindQueued, "dated"))
	// r0: this interval's overhead, held within twice the mean (a copy
	// interrupted is charge time, not overhead); r5: the mean, a running
	// one weighing the newest an eighth.
	a.emit(asm.Mov.Reg(asm.R0, asm.R6), asm.Sub.Reg(asm.R0, asm.R7), asm.LoadMem(asm.R5, asm.R9, fillOverhead, asm.DWord))
	a.emit(asm.JEq.Imm(asm.R5, 0, "meaned"), asm.Mov.Reg(asm.R1, asm.R5), asm.LSh.Imm(asm.R1, 1))
	a.emit(asm.JLE.Reg(asm.R0, asm.R1, "held"), asm.Mov.Reg(asm.R0, asm.R1))
	a.label("held")
	a.emit(asm.Mul.Imm(asm.R5, 7), asm.Add.Reg(asm.R0, asm.R5), asm.RSh.Imm(asm.R0, 3))
	a.label("meaned")
	a.emit(asm.StoreMem(asm.R9, fillOverhead, asm.R0, asm.DWord))
	// back = dt - overhead, when that is more than the rate's.
	a.emit(asm.JGE.Reg(asm.R0, asm.R6, "dated"), asm.Mov.Reg(asm.R1, asm.R6), asm.Sub.Reg(asm.R1, asm.R0))
	a.emit(asm.JLE.Reg(asm.R1, asm.R7, "dated"), asm.Mov.Reg(asm.R7, asm.R1))
	a.label("dated")
}

// fillCopyTime emits: when the previous change (kind in r3) was a release
// too, the interval r6 is the reader's time to read this skb whole (the
// bytes released at fillReleaseSlot), which goes into CopyRate: a running
// mean weighing the newest an eighth, each measure held within half and
// twice the mean (a read call's last skb is often read in part, the rest
// in the next call, after the caller's time).
func fillCopyTime(a *builder) {
	a.emit(asm.JNE.Imm(asm.R3, fillKindReleased, "timed"))
	a.emit(asm.LoadMem(asm.R4, asm.RFP, fillReleaseSlot, asm.DWord), asm.JEq.Imm(asm.R4, 0, "timed"))
	a.emit(asm.Mov.Reg(asm.R0, asm.R6), asm.LSh.Imm(asm.R0, 10), asm.Div.Reg(asm.R0, asm.R4))
	a.emit(asm.LoadMem(asm.R5, asm.R9, fillCopyRate, asm.DWord), asm.JEq.Imm(asm.R5, 0, "rated"))
	a.emit(asm.Mov.Reg(asm.R1, asm.R5), asm.LSh.Imm(asm.R1, 1), asm.JLE.Reg(asm.R0, asm.R1, "notabove"), asm.Mov.Reg(asm.R0, asm.R1))
	a.label("notabove")
	a.emit(asm.Mov.Reg(asm.R1, asm.R5), asm.RSh.Imm(asm.R1, 1), asm.JGE.Reg(asm.R0, asm.R1, "notbelow"), asm.Mov.Reg(asm.R0, asm.R1))
	a.label("notbelow")
	a.emit(asm.Mul.Imm(asm.R5, 7), asm.Add.Reg(asm.R0, asm.R5), asm.RSh.Imm(asm.R0, 3))
	a.label("rated")
	a.emit(asm.StoreMem(asm.R9, fillCopyRate, asm.R0, asm.DWord))
	a.label("timed")
}

// fillAdd emits: the sums of r9 plus level (bytes << 32 | limit) held
// for dur ns; nothing when dur is 0. It uses r0 and r3-r5; tag makes its
// labels its own.
func fillAdd(a *builder, level, dur asm.Register, tag string) {
	done, notFull := "done_"+tag, "notfull_"+tag
	a.emit(asm.JSLE.Imm(dur, 0, done), atomicMem(asm.AddAtomic, asm.R9, dur, fillTotalNS))
	// r3 the bytes, r4 the limit.
	a.emit(asm.Mov.Reg(asm.R3, level), asm.RSh.Imm(asm.R3, 32), asm.Mov.Reg(asm.R4, level), asm.LSh.Imm(asm.R4, 32), asm.RSh.Imm(asm.R4, 32))
	a.emit(asm.Mov.Reg(asm.R5, asm.R3), asm.Mul.Reg(asm.R5, dur), atomicMem(asm.AddAtomic, asm.R9, asm.R5, fillBytesNS))
	a.emit(asm.JEq.Imm(asm.R4, 0, done))
	a.emit(asm.Mov.Reg(asm.R5, asm.R3), asm.Mul.Imm(asm.R5, 10), asm.Mov.Reg(asm.R0, asm.R4), asm.Mul.Imm(asm.R0, fillFullTenths))
	a.emit(asm.JLT.Reg(asm.R5, asm.R0, notFull), atomicMem(asm.AddAtomic, asm.R9, dur, fillFullNS))
	a.label(notFull)
	a.emit(asm.Mov.Reg(asm.R0, asm.R4), asm.Mul.Imm(asm.R0, fillEmptyTenths))
	a.emit(asm.JGE.Reg(asm.R5, asm.R0, done), atomicMem(asm.AddAtomic, asm.R9, dur, fillEmptyNS))
	a.label(done)
}
