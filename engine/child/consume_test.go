package child

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/internal/childtest"
	"nbdscope/model"
	"nbdscope/nbd"
)

func TestBufferIsZero(t *testing.T) {
	for _, n := range []int{1, 7, 31, 32, 33, 100, 4096, 65536 + 5} {
		buf := make([]byte, n)
		if !BufferIsZero(buf) {
			t.Fatalf("%d zero bytes: not zero", n)
		}
		for i := 0; i < n; i++ {
			buf[i] = 1
			if BufferIsZero(buf) {
				t.Fatalf("%d bytes with byte %d set: zero", n, i)
			}
			buf[i] = 0
		}
	}
	if !BufferIsZero(nil) {
		t.Fatal("empty buffer not zero")
	}
}

// TestScanLikeConvert: the sector-by-sector scan says zero only for a
// buffer zero throughout, wherever the one non-zero byte is (in the first
// sector, a later one, the short last one), and a fresh zeroed mapping is
// written and dropped for a zero buffer.
func TestScanLikeConvert(t *testing.T) {
	for _, n := range []int{1, 512, 513, 4096, 2<<20 + 100} {
		buf := make([]byte, n)
		if !ScanLikeConvert(buf) {
			t.Fatalf("%d zero bytes: not zero", n)
		}
		for _, i := range []int{0, n / 2, n - 1} {
			buf[i] = 0xff
			if ScanLikeConvert(buf) {
				t.Errorf("%d bytes with byte %d set: zero", n, i)
			}
			buf[i] = 0
		}
		for i := range buf {
			buf[i] = 0xff
		}
		if ScanLikeConvert(buf) {
			t.Errorf("%d bytes of 0xff: zero", n)
		}
	}
	if err := WriteZeroesLikeNullCo(2 << 20); err != nil {
		t.Fatal(err)
	}
}

// patternRoot is the expected root digest of one pass over a pattern
// export, computed here from the definition alone: every 8 bytes hold their
// offset, big-endian; SHA-256 of each 64 KiB block, SHA-256 of the digests
// and of the export's length (little-endian uint64).
func patternRoot(size int64) Digest {
	root := sha256.New()
	block := make([]byte, 64<<10)
	for off := int64(0); off < size; off += int64(len(block)) {
		b := block[:min(int64(len(block)), size-off)]
		for i := 0; i < len(b); i += 8 {
			binary.BigEndian.PutUint64(b[i:], uint64(off)+uint64(i))
		}
		d := sha256.Sum256(b)
		root.Write(d[:])
	}
	root.Write(binary.LittleEndian.AppendUint64(nil, uint64(size)))
	var d Digest
	root.Sum(d[:0])
	return d
}

// The root of a pass is blksum's digest of the same export. These digests
// were printed by blksum 0.11.0 (nirs/blkhash at 283a48f, built from source:
// it is not packaged for Debian), run as `blksum nbd+unix:///?socket=S`
// against `nbdscope serve -k S --backend B --size N`. A pass is fed in
// 96 KiB pieces, so blocks are assembled from two reads as a client's
// would be; the pattern's last block is short (4 MiB + 24 KiB).
func TestHashRootIsBlksums(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend nbd.Backend
		blksum  string
	}{
		{"pattern 4218880", nbd.NewPattern(4218880), "12cf7613c8064ccb2b819d66d93fc9f97d08af8191a1721e27b1bb6b3bc7fa37"},
		{"pattern 64m", nbd.NewPattern(64 << 20), "3eb41ead61267f303e361caa2481ac0343422fcf3ce1c3ee7d25baa9a2f538f9"},
		{"null 1m fill 0", nbd.NewNull(1<<20, 0), "3dd455346755274ce76f1c555df5e05c1cdd8da4b1c70ab7c2a6b09f51bb5ce0"},
		{"null 1m fill 0xff", nbd.NewNull(1<<20, 0xff), "594e698fc6507483b884faf7b675325f9c2a3bb2933a9a6d397108a2f075324e"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := tc.backend.Size()
			h := newStreamHasher(size, 0, newTokens(2))
			for off := int64(0); off < size; off += 96 << 10 {
				buf := make([]byte, min(96<<10, size-off))
				if _, err := tc.backend.ReadAt(buf, off); err != nil {
					t.Fatal(err)
				}
				h.Consume(uint64(off), buf, len(buf))
			}
			if st := h.Stats(); st.Passes != 1 || st.Root != tc.blksum {
				t.Fatalf("%+v, want one pass with blksum's root %s", st, tc.blksum)
			}
		})
	}
}

// The hasher folds digests in stream order whatever order the pieces come
// in, with request sizes that split blocks and a short last block.
func TestStreamHasherAnyOrder(t *testing.T) {
	const size = 4<<20 + 24<<10 // a short last block
	want := patternRoot(size).String()
	for _, req := range []int{8 << 10, 96 << 10, 256 << 10, 2 << 20} {
		h := newStreamHasher(size, 0, newTokens(3))
		var pieces [][2]int64 // two passes
		for pass := int64(0); pass < 2; pass++ {
			for off := int64(0); off < size; off += int64(req) {
				pieces = append(pieces, [2]int64{pass*size + off, min(int64(req), size-off)})
			}
		}
		rng := rand.New(rand.NewPCG(1, uint64(req)))
		// Shuffle within windows of 16 requests: replies overtake each
		// other, as far as a client's requests in flight allow.
		for i := 0; i < len(pieces); i += 16 {
			w := pieces[i:min(i+16, len(pieces))]
			rng.Shuffle(len(w), func(a, b int) { w[a], w[b] = w[b], w[a] })
		}
		for _, p := range pieces {
			buf := make([]byte, p[1])
			nbd.PatternFill(p[0]%size, buf)
			h.Consume(uint64(p[0]), buf, len(buf))
		}
		st := h.Stats()
		if st.Passes != 2 || st.Root != want || st.Broken != 0 {
			t.Fatalf("req %d: %+v, want 2 passes with root %s", req, st, want)
		}
		if req < 2<<20 && st.Reordered == 0 {
			t.Fatalf("req %d: no digest arrived out of order; the test proves nothing", req)
		}
		if len(h.pending) != 0 || len(h.partial) != 0 {
			t.Fatalf("req %d: %d pending, %d partial left", req, len(h.pending), len(h.partial))
		}
	}
}

// A hole (a write or a failed read) costs its pass the root, not the next.
func TestStreamHasherHole(t *testing.T) {
	const size = 1 << 20
	h := newStreamHasher(size, 0, newTokens(1))
	for pos := int64(0); pos < 2*size; pos += 96 << 10 {
		n := min(96<<10, size-pos%size)
		if pos+n > 2*size {
			n = 2*size - pos
		}
		buf := make([]byte, n)
		nbd.PatternFill(pos%size, buf)
		if pos == 96<<10 {
			buf = nil
		}
		h.Consume(uint64(pos), buf, int(n))
		if pos%size+n == size {
			pos -= 96<<10 - n // the next request starts the next pass
		}
	}
	st := h.Stats()
	if st.Broken != 1 || st.Passes != 1 || st.Root != patternRoot(size).String() {
		t.Fatalf("%+v", st)
	}
	// Starting mid-stream, the hasher waits for the next pass.
	h = newStreamHasher(size, 5, newTokens(1))
	h.Consume(5, make([]byte, 512), 512)
	if h.start != size || len(h.pending) != 0 {
		t.Fatalf("start %d, %d pending", h.start, len(h.pending))
	}
}

// jitter delays reads so that later requests overtake earlier ones.
type jitter struct{ nbd.Backend }

func (j jitter) ReadAt(p []byte, off int64) (int, error) {
	time.Sleep(time.Duration(3-(off/int64(len(p)))%4) * 300 * time.Microsecond)
	return j.Backend.ReadAt(p, off)
}

// serveBackend serves be read-only on a unix socket for the test's life.
func serveBackend(t *testing.T, be nbd.Backend) string {
	t.Helper()
	return childtest.ServeExport(t, nbd.Export{Backend: be, ReadOnly: true}, 0)
}

// startLoad starts a load role in this process, closed when the test
// ends.
func startLoad(t *testing.T, spec wire.LoadSpec) *loadRole {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ro, _, err := startLoadRole(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	r := ro.(*loadRole)
	t.Cleanup(r.close)
	return r
}

// runLoad runs a load role in this process until cond holds on its poll
// reply (or 30 s pass) and returns the last reply.
func runLoad(t *testing.T, spec wire.LoadSpec, cond func(m wire.Msg) bool) wire.Msg {
	t.Helper()
	r := startLoad(t, spec)
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := r.poll()
		if m.Errors != 0 {
			t.Fatalf("load errors: %s", m.LastErr)
		}
		if cond(m) {
			r.gate.setPaused(true) // drain the requests in flight: exact counts
			return r.poll()
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %+v", *m.Consumed)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hash is right: a full read of a 64 MiB pattern export gives the root
// computed from the pattern's definition, with one connection and with
// four whose replies come back out of order.
func TestHashPatternExport(t *testing.T) {
	const size = 64 << 20
	want := patternRoot(size).String()
	for _, tc := range []struct {
		name      string
		conns     int
		threads   int
		reordered bool
	}{{"1 connection", 1, 1, false}, {"4 connections out of order", 4, 2, true}} {
		t.Run(tc.name, func(t *testing.T) {
			uri := serveBackend(t, jitter{nbd.NewPattern(size)})
			spec := wire.LoadSpec{URI: uri, Settings: wire.Start{model.SetConnections: {Int: tc.conns}, model.SetRequestSize: {Int: 256 << 10},
				model.SetInFlight: {Int: 4}, model.SetWorkload: {Str: string(model.WorkRead)}, model.SetConsume: {Str: string(model.ConsumeHash)}, model.SetHashThreads: {Int: tc.threads}}}
			m := runLoad(t, spec, func(m wire.Msg) bool { return m.Consumed.HashPasses >= 1 })
			c := m.Consumed
			if c.RootDigest != want || c.HashBroken != 0 {
				t.Fatalf("root %s (broken %d), want %s", c.RootDigest, c.HashBroken, want)
			}
			if c.HashBlocks < size/HashBlockSize {
				t.Fatalf("%d blocks hashed for a full pass of %d", c.HashBlocks, size/HashBlockSize)
			}
			if tc.reordered && c.HashReordered == 0 {
				t.Fatal("no reply came out of order; the test proves nothing")
			}
		})
	}
}

// scan is right: every buffer of a zero export is zero, none of a 0xff one.
func TestScanNullExport(t *testing.T) {
	for _, fill := range []byte{0, 0xff} {
		uri := serveBackend(t, nbd.NewNull(1<<30, fill))
		spec := wire.LoadSpec{URI: uri, Settings: wire.Start{model.SetConnections: {Int: 1}, model.SetRequestSize: {Int: 256 << 10}, model.SetInFlight: {Int: 4},
			model.SetWorkload: {Str: string(model.WorkRead)}, model.SetConsume: {Str: string(model.ConsumeScan)}}}
		m := runLoad(t, spec, func(m wire.Msg) bool { return m.Consumed.ScannedBuffers >= 200 })
		c := m.Consumed
		want := c.ScannedBuffers
		if fill != 0 {
			want = 0
		}
		if c.ZeroBuffers != want || c.ScannedBuffers != m.Ops {
			t.Fatalf("fill %#x: %d of %d buffers zero (%d reads), want %d", fill, c.ZeroBuffers, c.ScannedBuffers, m.Ops, want)
		}
	}
}

// BenchmarkStreamHasher is the hash mode's work alone: 2 MiB reads of the
// stream, digested and folded in order (bench/hash.sh prints it).
func BenchmarkStreamHasher(b *testing.B) {
	const size, req = 1 << 30, 2 << 20
	buf := make([]byte, req)
	nbd.PatternFill(0, buf)
	h := newStreamHasher(size, 0, newTokens(1))
	b.SetBytes(req)
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Consume(uint64(i)*req, buf, req)
	}
	b.StopTimer()
	// CPU, not wall time: a busy machine stretches the latter.
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := time.Duration(r1.Utime.Nano() - r0.Utime.Nano() + r1.Stime.Nano() - r0.Stime.Nano())
	b.ReportMetric(cpu.Seconds()/(float64(b.N)*req/(1<<30)), "cpu-s/GiB")
}
