package child

// The consume modes as they run inside a load child: the zero scan, the
// blkhash stream hasher and its thread tokens, and the load's consume
// state. The modes' names, the hash-thread setting and the counts the
// controller adds up are model's (consume.go).

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"sync"
	"sync/atomic"
	"unsafe"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
)

// BufferIsZero reports whether buf holds only zero bytes, with the
// semantics and the memory accesses of qemu 7.2's buffer_is_zero on an
// AVX2 machine (util/bufferiszero.c, buffer_zero_avx2, for 64 bytes or
// more): it loads the first 32 bytes and prefetches the 32-byte line at
// (buf+160) rounded down before it tests them, so even a buffer whose
// first byte is not zero costs two cache lines, not one; a zero buffer is
// read through. Go has no prefetch, so a one-byte load of that line
// stands in for it. perf record of qemu-img convert reading 0xff data
// from nbdscope's server: its zero check took 6.9% of its samples, where
// ours, stopping at the first byte, took 3.3% of the load's: the scan
// that keeps qemu-img from its socket between replies, half done.
func BufferIsZero(buf []byte) bool {
	zero, touched := bufferIsZero(buf)
	prefetchSink.Store(uint32(touched))
	return zero
}

// bufferIsZero is BufferIsZero, with the byte it loaded in place of the
// prefetch: the caller keeps it (prefetchSink) so that the load is made.
func bufferIsZero(buf []byte) (zero bool, touched byte) {
	n := len(buf)
	if n < 64 {
		var t byte
		for _, b := range buf {
			t |= b
		}
		return t == 0, 0
	}
	head := binary.NativeEndian.Uint64(buf) | binary.NativeEndian.Uint64(buf[8:]) |
		binary.NativeEndian.Uint64(buf[16:]) | binary.NativeEndian.Uint64(buf[24:])
	base := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	if p := int((base+160)&^31 - base); p < n {
		touched = buf[p] // qemu's prefetcht0 of its next line
	}
	if head != 0 {
		return false, touched
	}
	i := 32
	for ; i+32 <= n; i += 32 {
		w := binary.NativeEndian.Uint64(buf[i:]) | binary.NativeEndian.Uint64(buf[i+8:]) |
			binary.NativeEndian.Uint64(buf[i+16:]) | binary.NativeEndian.Uint64(buf[i+24:])
		if w != 0 {
			return false, touched
		}
	}
	for ; i < n; i++ {
		if buf[i] != 0 {
			return false, touched
		}
	}
	return true, touched
}

// prefetchSink keeps the loads that stand in for qemu's prefetch, once a
// buffer: a value nothing keeps could be optimised away.
var prefetchSink atomic.Uint32

// SectorSize is the unit qemu-img convert's zero scan steps by
// (BDRV_SECTOR_SIZE).
const SectorSize = 512

// ScanLikeConvert scans a read buffer as qemu-img convert does before it
// writes (qemu-img.c, is_allocated_sectors): buffer_is_zero on the first
// 512-byte sector, then on each next one while the answer stays the same.
// A zero buffer costs one call per sector, 4096 per 2 MiB, not one pass,
// and that time is what keeps qemu-img from its socket, so the stand-in
// spends it too. It reports whether the whole buffer is zero.
func ScanLikeConvert(buf []byte) bool {
	if len(buf) == 0 {
		return true
	}
	first, sink := bufferIsZero(buf[:min(SectorSize, len(buf))])
	defer func() { prefetchSink.Store(uint32(sink)) }()
	for i := SectorSize; i < len(buf); i += SectorSize {
		z, t := bufferIsZero(buf[i:min(i+SectorSize, len(buf))])
		sink |= t
		if z != first {
			return false
		}
	}
	return first
}

// WriteZeroesLikeNullCo does what qemu-img convert does next with a
// zero buffer when its target is null-co, as the qemu-img presets' is:
// it writes zeroes, and null-co has no write-zeroes of its own, so
// qemu's block layer (block/io.c, bdrv_co_do_pwrite_zeroes) writes a
// bounce buffer of zeroes instead, allocated zeroed for the request and
// freed after it (qemu_try_blockalign0, qemu_vfree). 2 MiB is past
// glibc's mmap threshold, so each is a fresh mapping: mmap, a page fault
// and a clear per page, munmap (strace -c of qemu-img reading 1 GiB of
// zeroes from qemu-nbd: 628 mmap, 528 munmap for 512 requests). That is
// most of qemu-img's CPU on zeroes, and it keeps it from its socket.
func WriteZeroesLikeNullCo(n int) error {
	b, err := mapAnon(n)
	if err != nil {
		return err
	}
	clear(b)
	return unmap(b)
}

// HashBlockSize is the block the hash mode digests (blkhash's default).
const HashBlockSize = 64 << 10

// Digest is a SHA-256 digest.
type Digest [sha256.Size]byte

func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// HashStats are the cumulative figures of a stream hasher.
type HashStats struct {
	Blocks    uint64 // 64 KiB blocks digested (random reads included)
	Passes    uint64 // full passes over the export whose root is known
	Broken    uint64 // passes with a hole (a write or a failed read in the stream)
	Reordered uint64 // block digests that arrived before an earlier block's
	Root      string // hex root digest of the last full pass; "" before one
}

// add adds o's counts to s; o's root, when it has one, is the later one.
func (s *HashStats) add(o HashStats) {
	s.Blocks += o.Blocks
	s.Passes += o.Passes
	s.Broken += o.Broken
	s.Reordered += o.Reordered
	if o.Root != "" {
		s.Root = o.Root
	}
}

// streamHasher computes the blkhash construction over the sequential
// stream of a load process: SHA-256 of each 64 KiB block of the export,
// then, per full pass, SHA-256 over the block digests in the export's
// order, whatever order the replies arrive in, followed by the pass's
// length in bytes as a little-endian uint64. That is blkhash 0.11's flat
// construction (lib/blkhash.c: hash_submission, hash_message_length), so a
// pass's root is what `blksum nbd+unix:///?socket=…` prints for the same
// export; TestHashRootIsBlksums holds digests blksum printed. Positions are absolute
// stream offsets from the load's cursor (pass = pos / size); a request
// never crosses a pass. Digests that arrive early wait in pending until
// the blocks before them are in, so the memory held is bounded by the
// data in flight.
type streamHasher struct {
	size    int64  // export size: one pass
	nblocks uint64 // blocks per pass (the last may be short)
	start   uint64 // stream position the hasher starts at (a pass boundary)
	threads *tokens

	mu      sync.Mutex
	next    uint64 // next global block (pass*nblocks + block) to fold in
	root    hash.Hash
	pending map[uint64]Digest
	partial map[uint64]*partialBlock // blocks assembled from several reads
	holed   map[uint64]bool          // passes with a hole
	stats   HashStats
}

type partialBlock struct {
	buf    []byte
	filled int
	hole   bool
}

// newStreamHasher starts hashing at the first pass boundary at or after
// the stream position cursor: requests sent before it are not counted.
func newStreamHasher(size int64, cursor uint64, threads *tokens) *streamHasher {
	nb := (uint64(size) + HashBlockSize - 1) / HashBlockSize
	pass := (cursor + uint64(size) - 1) / uint64(size)
	return &streamHasher{
		size: size, nblocks: nb, start: pass * uint64(size), next: pass * nb,
		threads: threads, root: sha256.New(),
		pending: map[uint64]Digest{}, partial: map[uint64]*partialBlock{}, holed: map[uint64]bool{},
	}
}

// blockLen is the length of block b of a pass.
func (h *streamHasher) blockLen(b uint64) int {
	return int(min(uint64(h.size)-b*HashBlockSize, HashBlockSize))
}

// Consume hashes the data of a sequential READ at stream position pos.
// data == nil marks a hole of n bytes (the position was written, or the
// read failed): the pass it falls in gets no root.
func (h *streamHasher) Consume(pos uint64, data []byte, n int) {
	if pos < h.start {
		// Before the first whole pass (the mode was switched on mid-pass):
		// the client's work all the same, with no root to fold it into.
		if data != nil {
			h.Digest(data)
		}
		return
	}
	pass, off := pos/uint64(h.size), pos%uint64(h.size)
	type span struct {
		g      uint64
		lo, hi int
	}
	var whole []span // blocks the data covers entirely
	for done := 0; done < n; {
		b := (off + uint64(done)) / HashBlockSize
		in := int((off + uint64(done)) % HashBlockSize)
		blen := h.blockLen(b)
		take := min(blen-in, n-done)
		g := pass*h.nblocks + b
		switch {
		case data == nil && in == 0 && take == blen:
			h.deliver(g, Digest{}, true)
		case data == nil:
			h.assemble(g, blen, in, take, nil)
		case in == 0 && take == blen:
			whole = append(whole, span{g, done, done + take})
		default:
			h.assemble(g, blen, in, take, data[done:done+take])
		}
		done += take
	}
	if len(whole) > 0 {
		h.digestAll(len(whole), func(i int) []byte { return data[whole[i].lo:whole[i].hi] },
			func(i int, d Digest) { h.deliver(whole[i].g, d, false) })
	}
}

// assemble copies take bytes of block g, from offset in, into the block's
// staging buffer and digests the block once all of it is in. piece == nil
// is a hole.
func (h *streamHasher) assemble(g uint64, blen, in, take int, piece []byte) {
	h.mu.Lock()
	pb := h.partial[g]
	if pb == nil {
		pb = &partialBlock{buf: make([]byte, blen)}
		h.partial[g] = pb
	}
	if piece == nil {
		pb.hole = true
	} else {
		copy(pb.buf[in:], piece)
	}
	pb.filled += take
	full := pb.filled >= blen
	if full {
		delete(h.partial, g)
	}
	h.mu.Unlock()
	if !full {
		return
	}
	if pb.hole {
		h.deliver(g, Digest{}, true)
		return
	}
	h.digestAll(1, func(int) []byte { return pb.buf }, func(_ int, d Digest) { h.deliver(g, d, false) })
}

// digestAll digests n blocks, each under a hash-thread token; with more
// than one thread the blocks of one request are spread over them (the
// caller takes the first, like blkhash's submitting thread).
func (h *streamHasher) digestAll(n int, block func(int) []byte, out func(int, Digest)) {
	one := func(i int) {
		h.threads.acquire()
		d := Digest(sha256.Sum256(block(i)))
		h.threads.release()
		out(i, d)
	}
	if n == 1 || h.threads.limit() == 1 {
		for i := 0; i < n; i++ {
			one(i)
		}
		return
	}
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); one(i) }()
	}
	one(0)
	wg.Wait()
}

// deliver folds block g's digest into the root in stream order; a digest
// that arrives early waits in pending. hole marks a block that was never
// read: its pass gets no root.
func (h *streamHasher) deliver(g uint64, d Digest, hole bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !hole {
		h.stats.Blocks++
	}
	if g < h.next {
		return
	}
	if hole {
		h.holed[g/h.nblocks] = true
	}
	h.pending[g] = d
	if g != h.next {
		h.stats.Reordered++
		return
	}
	for {
		d, ok := h.pending[h.next]
		if !ok {
			return
		}
		delete(h.pending, h.next)
		h.root.Write(d[:])
		h.next++
		if h.next%h.nblocks == 0 {
			h.endPass(h.next/h.nblocks - 1)
		}
	}
}

// endPass closes a pass: its root is the digest of its block digests and
// its length, unless the pass had a hole.
func (h *streamHasher) endPass(pass uint64) {
	if h.holed[pass] {
		delete(h.holed, pass)
		h.stats.Broken++
	} else {
		var length [8]byte
		binary.LittleEndian.PutUint64(length[:], uint64(h.size))
		h.root.Write(length[:])
		var d Digest
		h.root.Sum(d[:0])
		h.stats.Passes++
		h.stats.Root = d.String()
	}
	h.root.Reset()
}

// Stats returns the cumulative figures.
func (h *streamHasher) Stats() HashStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}

// Digest digests data not in the sequential stream (random reads): the
// work a hashing client does, with no root to fold it into.
func (h *streamHasher) Digest(data []byte) {
	for i := 0; i < len(data); i += HashBlockSize {
		h.threads.acquire()
		sha256.Sum256(data[i:min(i+HashBlockSize, len(data))])
		h.threads.release()
	}
	h.mu.Lock()
	h.stats.Blocks += uint64((len(data) + HashBlockSize - 1) / HashBlockSize)
	h.mu.Unlock()
}

// tokens is a counting semaphore whose limit can change while it is held:
// the hash threads of a load process.
type tokens struct {
	mu   sync.Mutex
	cond *sync.Cond
	max  int
	used int
}

func newTokens(n int) *tokens {
	t := &tokens{max: max(1, n)}
	t.cond = sync.NewCond(&t.mu)
	return t
}

func (t *tokens) acquire() {
	t.mu.Lock()
	for t.used >= t.max {
		t.cond.Wait()
	}
	t.used++
	t.mu.Unlock()
}

func (t *tokens) release() {
	t.mu.Lock()
	t.used--
	t.cond.Signal()
	t.mu.Unlock()
}

func (t *tokens) limit() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.max
}

func (t *tokens) setLimit(n int) {
	t.mu.Lock()
	t.max = max(1, n)
	t.cond.Broadcast()
	t.mu.Unlock()
}

// consumer is the consume state of a load process (part of loadRole). It
// runs on the completion path, so everything is atomic or briefly locked.
type consumer struct {
	mode    atomic.Value // model.ConsumeMode: read it with consumeMode
	threads *tokens
	hasher  atomic.Pointer[streamHasher]
	scanned atomic.Uint64
	zero    atomic.Uint64

	cmu      sync.Mutex // serialises mode changes; guards hashBase
	hashBase HashStats  // figures of hashers retired by a mode change
}

func (r *loadRole) initConsume(mode model.ConsumeMode, threads int) {
	if mode == "" {
		mode = model.ConsumeNone
	}
	r.mode.Store(mode)
	r.threads = newTokens(threads)
}

// consumeMode is the mode now. The atomic.Value holds a model.ConsumeMode
// only: a bare string stored there would compare unequal to every mode.
func (r *loadRole) consumeMode() model.ConsumeMode {
	return r.mode.Load().(model.ConsumeMode)
}

// startHasher starts a hasher at the next pass boundary when the mode is
// hash and the export size is known (after the first connection).
func (r *loadRole) startHasher() {
	r.cmu.Lock()
	defer r.cmu.Unlock()
	if r.consumeMode() != model.ConsumeHash || r.size == 0 || r.hasher.Load() != nil {
		return
	}
	r.hasher.Store(newStreamHasher(r.size, r.cursor.Load(), r.threads))
}

// setHashThreads applies a live hash-threads change (resolved: 1 or more).
func (r *loadRole) setHashThreads(c wire.Cmd) wire.Msg {
	if c.Int < 1 || c.Int > model.MaxHashThreads {
		return childFail(fmt.Errorf("hash threads %d: want 1…%d", c.Int, model.MaxHashThreads))
	}
	r.threads.setLimit(c.Int)
	return wire.Msg{}
}

// setConsumeMode applies a live consume change.
func (r *loadRole) setConsumeMode(c wire.Cmd) wire.Msg {
	r.cmu.Lock()
	mode := model.ConsumeMode(c.Str)
	r.mode.Store(mode)
	if h := r.hasher.Load(); h != nil && mode != model.ConsumeHash {
		// Retired: a later switch back starts at a fresh pass, since the
		// blocks read meanwhile were never hashed.
		r.hasher.Store(nil)
		r.hashBase.add(h.Stats())
	}
	r.cmu.Unlock()
	r.startHasher()
	r.connMu.Lock()
	for _, lc := range r.conns {
		r.shapeLoop(lc.cl)
	}
	r.connMu.Unlock()
	return wire.Msg{}
}

// shapeLoop turns qemu's event loop on a connection's EAGAIN in the scan
// mode, qemu-img convert's (nbd.Conn.SetEventLoop): between a receive
// call that finds the socket empty and its sleep, qemu-img's coroutine
// yields to its main loop, which goes round (event notifiers written and
// read, a ppoll) before it sleeps. The other modes stand for clients
// without that loop (the hash mode for nbdcopy and blksum, on libnbd).
// Only the ppoll reader has a loop to turn: elsewhere it changes nothing,
// and where no eventfd can be made (out of descriptors) the reader reads
// on without the turns, as it did before they were modelled.
func (r *loadRole) shapeLoop(cl *nbd.Client) {
	cl.Conn().SetEventLoop(r.consumeMode() == model.ConsumeScan)
}

// consume does with a finished request's data what the mode says. It runs
// on the completion path (the client's reader goroutine for inline reads),
// so a busy mode slows the draining of the socket, as in the real client.
func (r *loadRole) consume(s *slot, err error) {
	buf := s.op.Buf
	ok := err == nil && s.read
	switch r.consumeMode() {
	case model.ConsumeCopy:
		if ok {
			if cap(s.sink) < len(buf) {
				s.sink = nbd.MakePayload(len(buf))
			}
			copy(s.sink, buf)
		}
	case model.ConsumeScan:
		if ok {
			r.scanned.Add(1)
			if ScanLikeConvert(buf) {
				r.zero.Add(1)
				WriteZeroesLikeNullCo(len(buf))
			}
		}
	case model.ConsumeHash:
		h := r.hasher.Load()
		switch {
		case h == nil:
		case ok && s.seq:
			h.Consume(s.pos, buf, len(buf))
		case s.seq: // a write or a failed read leaves a hole in the pass
			h.Consume(s.pos, nil, len(buf))
		case ok:
			h.Digest(buf)
		}
	}
}

// consumeStats are the counts for a poll reply.
func (r *loadRole) consumeStats() *model.ConsumeCounts {
	r.cmu.Lock()
	st := r.hashBase
	h := r.hasher.Load()
	r.cmu.Unlock()
	if h != nil {
		st.add(h.Stats())
	}
	return &model.ConsumeCounts{
		ScannedBuffers: r.scanned.Load(), ZeroBuffers: r.zero.Load(),
		HashThreads: r.threads.limit(), HashBlocks: st.Blocks, HashPasses: st.Passes,
		HashBroken: st.Broken, HashReordered: st.Reordered, RootDigest: st.Root,
	}
}

// nextSeq claims the next sequential request of up to size bytes: its
// absolute stream position and length. The stream wraps at the end of the
// export, and no request crosses it, so each pass reads the export whole.
func (r *loadRole) nextSeq(size int) (pos uint64, n int) {
	if r.size <= 0 {
		return 0, size // an empty export: the server answers the error
	}
	for {
		c := r.cursor.Load()
		off := int64(c % uint64(r.size))
		n = int(min(int64(size), r.size-off))
		if r.cursor.CompareAndSwap(c, c+uint64(n)) {
			return c, n
		}
	}
}
