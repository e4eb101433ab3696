package nbd

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// bkMemOp is one step of a memory backend scenario.
type bkMemOp struct {
	kind    string // "write", "trim", "zero", "zero-nohole"
	off, n  int64
	fill    byte // for writes
	noAlloc bool // writes: fill 0 into holes
}

func (op bkMemOp) apply(t *testing.T, m *Memory, model []byte) {
	t.Helper()
	switch op.kind {
	case "write":
		p := bytes.Repeat([]byte{op.fill}, int(op.n))
		if n, err := m.WriteAt(p, op.off); err != nil || n != len(p) {
			t.Fatalf("%v: WriteAt = %d, %v", op, n, err)
		}
		copy(model[op.off:], p)
	case "trim":
		if err := m.Trim(op.off, op.n); err != nil {
			t.Fatalf("%v: %v", op, err)
		}
		clear(model[op.off : op.off+op.n])
	case "zero", "zero-nohole":
		if err := m.Zero(op.off, op.n, op.kind == "zero"); err != nil {
			t.Fatalf("%v: %v", op, err)
		}
		clear(model[op.off : op.off+op.n])
	default:
		t.Fatalf("bad op %q", op.kind)
	}
}

// bkMemVerify compares the whole backend with the model and checks that the
// extents agree with the chunks that hold data.
func bkMemVerify(t *testing.T, m *Memory, model []byte) {
	t.Helper()
	got := make([]byte, len(model))
	if _, err := m.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if i := bkFirstDiff(got, model); i >= 0 {
		t.Fatalf("byte %d = %#x, model has %#x", i, got[i], model[i])
	}
	ext, err := m.Extents(0, m.Size())
	if err != nil {
		t.Fatal(err)
	}
	bkCheckExtents(t, m, 0, m.Size(), ext)
	// Every non-zero byte of the model lies in a data extent.
	pos := int64(0)
	for _, e := range ext {
		if e.Flags != 0 {
			if i := bkFirstNonZero(model[pos : pos+int64(e.Length)]); i >= 0 {
				t.Fatalf("hole extent at %d+%d holds data at %d", pos, e.Length, pos+int64(i))
			}
		}
		pos += int64(e.Length)
	}
}

// bkWriteReadBack writes p at off and reads the range back into got
// (len(p) bytes): the error says which call fell short or where the bytes
// read differ from those written.
func bkWriteReadBack(b Backend, p, got []byte, off int64) error {
	if n, err := b.WriteAt(p, off); err != nil || n != len(p) {
		return fmt.Errorf("WriteAt(%d, %d) = %d, %v", off, len(p), n, err)
	}
	if n, err := b.ReadAt(got, off); err != nil || n != len(got) {
		return fmt.Errorf("ReadAt(%d, %d) = %d, %v", off, len(got), n, err)
	}
	if i := bkFirstDiff(got, p); i >= 0 {
		return fmt.Errorf("read back (%d, %d): byte %d is %#x, %#x was written", off, len(p), off+int64(i), got[i], p[i])
	}
	return nil
}

// bkFirstDiff is the index of the first byte where got and want differ
// (-1 when they are equal; they have the same length).
func bkFirstDiff(got, want []byte) int {
	for i := range got {
		if got[i] != want[i] {
			return i
		}
	}
	return -1
}

func TestMemoryScenarios(t *testing.T) {
	const cs = memChunkSize
	tests := []struct {
		name      string
		size      int64
		ops       []bkMemOp
		wantExt   []Extent // of the whole export, nil = don't check
		wantAlloc int64    // allocated bytes at the end, -1 = don't check
	}{
		{
			name:      "empty",
			size:      4 * cs,
			wantExt:   []Extent{{4 * cs, StateHole | StateZero}},
			wantAlloc: 0,
		},
		{
			name:      "one write in the second chunk",
			size:      4 * cs,
			ops:       []bkMemOp{{kind: "write", off: cs + 100, n: 10, fill: 1}},
			wantExt:   []Extent{{cs, 3}, {cs, 0}, {2 * cs, 3}},
			wantAlloc: cs,
		},
		{
			name:      "write across a chunk boundary",
			size:      4 * cs,
			ops:       []bkMemOp{{kind: "write", off: cs - 1, n: 2, fill: 7}},
			wantExt:   []Extent{{2 * cs, 0}, {2 * cs, 3}},
			wantAlloc: 2 * cs,
		},
		{
			name: "adjacent chunks merge",
			size: 4 * cs,
			ops: []bkMemOp{
				{kind: "write", off: 2 * cs, n: 1, fill: 1},
				{kind: "write", off: 3 * cs, n: 1, fill: 2},
			},
			wantExt:   []Extent{{2 * cs, 3}, {2 * cs, 0}},
			wantAlloc: 2 * cs,
		},
		{
			name: "zeroes into holes do not allocate",
			size: 4 * cs,
			ops: []bkMemOp{
				{kind: "write", off: 0, n: 4 * cs, fill: 0},
				{kind: "write", off: 5, n: 100, fill: 0},
			},
			wantExt:   []Extent{{4 * cs, 3}},
			wantAlloc: 0,
		},
		{
			name: "zeroes into data are written",
			size: 2 * cs,
			ops: []bkMemOp{
				{kind: "write", off: 0, n: 100, fill: 9},
				{kind: "write", off: 10, n: 20, fill: 0},
			},
			wantExt:   []Extent{{cs, 0}, {cs, 3}},
			wantAlloc: cs,
		},
		{
			name: "trim whole chunk frees it",
			size: 4 * cs,
			ops: []bkMemOp{
				{kind: "write", off: 0, n: 4 * cs, fill: 3},
				{kind: "trim", off: cs, n: cs},
			},
			wantExt:   []Extent{{cs, 0}, {cs, 3}, {2 * cs, 0}},
			wantAlloc: 3 * cs,
		},
		{
			name: "trim partial chunks zeroes in place",
			size: 4 * cs,
			ops: []bkMemOp{
				{kind: "write", off: 0, n: 4 * cs, fill: 3},
				{kind: "trim", off: cs / 2, n: 2 * cs},
			},
			wantExt:   []Extent{{cs, 0}, {cs, 3}, {2 * cs, 0}},
			wantAlloc: 3 * cs,
		},
		{
			name: "trim within one chunk, unaligned",
			size: 2 * cs,
			ops: []bkMemOp{
				{kind: "write", off: 0, n: 2 * cs, fill: 3},
				{kind: "trim", off: 100, n: 200},
			},
			wantExt:   []Extent{{2 * cs, 0}},
			wantAlloc: 2 * cs,
		},
		{
			name: "trim within one chunk, aligned start",
			size: 2 * cs,
			ops: []bkMemOp{
				{kind: "write", off: 0, n: 2 * cs, fill: 3},
				{kind: "trim", off: cs, n: 512},
			},
			wantAlloc: 2 * cs,
		},
		{
			name: "trim within one chunk, aligned end",
			size: 2 * cs,
			ops: []bkMemOp{
				{kind: "write", off: 0, n: 2 * cs, fill: 3},
				{kind: "trim", off: cs - 512, n: 512},
			},
			wantAlloc: 2 * cs,
		},
		{
			name: "zero and zero-nohole free whole chunks",
			size: 8 * cs,
			ops: []bkMemOp{
				{kind: "write", off: 0, n: 8 * cs, fill: 0xaa},
				{kind: "zero", off: cs, n: 2 * cs},
				{kind: "zero-nohole", off: 5*cs - 1, n: cs + 2},
			},
			wantExt:   []Extent{{cs, 0}, {2 * cs, 3}, {2 * cs, 0}, {cs, 3}, {2 * cs, 0}},
			wantAlloc: 5 * cs,
		},
		{
			name: "short last chunk",
			size: 2*cs + 1024,
			ops: []bkMemOp{
				{kind: "write", off: 2 * cs, n: 1024, fill: 5},
				{kind: "write", off: 0, n: 1, fill: 5},
			},
			wantExt:   []Extent{{cs, 0}, {cs, 3}, {1024, 0}},
			wantAlloc: 2 * cs,
		},
		{
			name: "trim to the end frees the short last chunk",
			size: 2*cs + 1024,
			ops: []bkMemOp{
				{kind: "write", off: 0, n: 2*cs + 1024, fill: 5},
				{kind: "trim", off: 2 * cs, n: 1024},
			},
			wantExt:   []Extent{{2 * cs, 0}, {1024, 3}},
			wantAlloc: 2 * cs,
		},
		{
			name: "trim everything",
			size: 3*cs + 512,
			ops: []bkMemOp{
				{kind: "write", off: 0, n: 3*cs + 512, fill: 5},
				{kind: "trim", off: 0, n: 3*cs + 512},
			},
			wantExt:   []Extent{{3*cs + 512, 3}},
			wantAlloc: 0,
		},
		{
			name: "trim of holes",
			size: 4 * cs,
			ops: []bkMemOp{
				{kind: "trim", off: 100, n: 3 * cs},
				{kind: "zero", off: 0, n: 4 * cs},
			},
			wantExt:   []Extent{{4 * cs, 3}},
			wantAlloc: 0,
		},
		{
			name: "write after trim",
			size: 2 * cs,
			ops: []bkMemOp{
				{kind: "write", off: 0, n: 2 * cs, fill: 1},
				{kind: "trim", off: 0, n: 2 * cs},
				{kind: "write", off: cs + 3, n: 3, fill: 2},
			},
			wantExt:   []Extent{{cs, 3}, {cs, 0}},
			wantAlloc: cs,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMemory(tt.size)
			model := make([]byte, tt.size)
			for _, op := range tt.ops {
				op.apply(t, m, model)
				bkMemVerify(t, m, model)
			}
			if tt.wantExt != nil {
				ext, err := m.Extents(0, tt.size)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(ext) != fmt.Sprint(tt.wantExt) {
					t.Errorf("Extents = %v, want %v", ext, tt.wantExt)
				}
			}
			if tt.wantAlloc >= 0 && m.Allocated() != tt.wantAlloc {
				t.Errorf("Allocated = %d, want %d", m.Allocated(), tt.wantAlloc)
			}
		})
	}
}

func TestMemoryExtentsSubranges(t *testing.T) {
	const cs = memChunkSize
	m := NewMemory(8 * cs)
	for _, idx := range []int64{1, 2, 5} {
		if _, err := m.WriteAt([]byte{1}, idx*cs); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		off, n int64
		want   []Extent
	}{
		{0, 8 * cs, []Extent{{cs, 3}, {2 * cs, 0}, {2 * cs, 3}, {cs, 0}, {2 * cs, 3}}},
		{0, 512, []Extent{{512, 3}}},
		{cs + 512, 512, []Extent{{512, 0}}},
		{cs - 512, 1024, []Extent{{512, 3}, {512, 0}}},
		{2*cs + 100, cs, []Extent{{cs - 100, 0}, {100, 3}}},
		{3 * cs, 2 * cs, []Extent{{2 * cs, 3}}},
		{5*cs + 1, 3*cs - 1, []Extent{{cs - 1, 0}, {2 * cs, 3}}},
		{8*cs - 1, 1, []Extent{{1, 3}}},
		{8 * cs, 0, nil},
	}
	for _, tt := range tests {
		ext, err := m.Extents(tt.off, tt.n)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ext) != fmt.Sprint(tt.want) {
			t.Errorf("Extents(%d, %d) = %v, want %v", tt.off, tt.n, ext, tt.want)
		}
		bkCheckExtents(t, m, tt.off, tt.n, ext)
	}
}

// A huge sparse export: Extents and Trim must not walk every chunk index.
func TestMemoryHugeSparse(t *testing.T) {
	const size = 1 << 50 // 1 PiB, 2^34 chunks
	m := NewMemory(size)
	offs := []int64{0, 1 << 40, 1<<40 + memChunkSize, size - 512}
	for _, off := range offs {
		if _, err := m.WriteAt([]byte{0xcc}, off); err != nil {
			t.Fatal(err)
		}
	}
	ext, err := m.Extents(0, size)
	if err != nil {
		t.Fatal(err)
	}
	want := []Extent{
		{memChunkSize, 0},
		{1<<40 - memChunkSize, 3},
		{2 * memChunkSize, 0},
		{size - 1<<40 - 3*memChunkSize, 3},
		{memChunkSize, 0},
	}
	if fmt.Sprint(ext) != fmt.Sprint(want) {
		t.Fatalf("Extents = %v, want %v", ext, want)
	}
	if err := m.Trim(512, size-1024); err != nil {
		t.Fatal(err)
	}
	if m.Allocated() != 2*memChunkSize {
		t.Errorf("Allocated after trim = %d, want 2 chunks", m.Allocated())
	}
	buf := make([]byte, 1)
	for _, off := range offs {
		m.ReadAt(buf, off)
		want := byte(0)
		if off == 0 || off == size-512 {
			want = 0xcc
		}
		if buf[0] != want {
			t.Errorf("byte at %d = %#x, want %#x", off, buf[0], want)
		}
	}
	if err := m.Zero(0, size, false); err != nil {
		t.Fatal(err)
	}
	if m.Allocated() != 0 {
		t.Errorf("Allocated after zeroing everything = %d", m.Allocated())
	}
}

func TestMemoryRandomAgainstModel(t *testing.T) {
	const size = 16*memChunkSize + 3*512
	rng := rand.New(rand.NewPCG(1, 2))
	m := NewMemory(size)
	model := make([]byte, size)
	kinds := []string{"write", "write", "write", "trim", "zero", "zero-nohole"}
	for i := 0; i < 300; i++ {
		off := rng.Int64N(size)
		n := rng.Int64N(min(size-off, 3*memChunkSize)) + 1
		if rng.IntN(3) == 0 { // sector-aligned, as clients send
			off &^= 511
			n = (n + 511) &^ 511
			n = min(n, size-off)
		}
		op := bkMemOp{kind: kinds[rng.IntN(len(kinds))], off: off, n: n, fill: byte(rng.IntN(3))}
		op.apply(t, m, model)
		if i%10 == 0 {
			bkMemVerify(t, m, model)
		}
		// Random sub-range extents.
		eo := rng.Int64N(size)
		en := rng.Int64N(size-eo) + 1
		ext, err := m.Extents(eo, en)
		if err != nil {
			t.Fatal(err)
		}
		var sum uint64
		for _, e := range ext {
			sum += e.Length
		}
		if sum != uint64(en) {
			t.Fatalf("Extents(%d, %d) add up to %d", eo, en, sum)
		}
	}
	bkMemVerify(t, m, model)
}

// Run with -race: concurrent non-overlapping writes into the same chunks,
// reads, trims and zeroes of other ranges, and racing overlapping writes
// (whose result is either value) must be free of data races.
func TestMemoryConcurrent(t *testing.T) {
	const (
		cs      = memChunkSize
		size    = 8 * cs
		workers = 8
		slot    = 4096 // each worker owns one 4 KiB slot per chunk of chunks 0-3
	)
	m := NewMemory(size)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			buf := bytes.Repeat([]byte{byte(w + 1)}, slot)
			rbuf := make([]byte, slot)
			for round := 0; round < 50; round++ {
				for c := int64(0); c < 4; c++ {
					off := c*cs + int64(w)*slot
					if err := bkWriteReadBack(m, buf, rbuf, off); err != nil {
						t.Errorf("worker %d: %v", w, err)
						return
					}
				}
				// Churn chunks 4-7: overlapping writes, trims, zeroes,
				// partial zeroes, reads and extents.
				o := 4*cs + int64((w*7919+round*104729)%(4*cs-2*slot))
				switch (w + round) % 5 {
				case 0:
					m.WriteAt(buf, o)
				case 1:
					m.Trim(4*cs+int64(round%4)*cs, cs)
				case 2:
					m.Zero(o, slot, round%2 == 0)
				case 3:
					big := make([]byte, 2*cs)
					m.ReadAt(big, 5*cs)
					for _, c := range big {
						if c > workers {
							t.Errorf("impossible byte %#x", c)
							return
						}
					}
				case 4:
					m.Extents(0, size)
				}
			}
		}(w)
	}
	wg.Wait()
	// Chunks 0-3 hold every worker's slot.
	got := make([]byte, 4*cs)
	m.ReadAt(got, 0)
	for c := 0; c < 4; c++ {
		for w := 0; w < workers; w++ {
			s := got[c*cs+w*slot : c*cs+(w+1)*slot]
			if bytes.Count(s, []byte{byte(w + 1)}) != slot {
				t.Errorf("chunk %d slot %d lost writes", c, w)
			}
		}
	}
}

// A partial zero must not lose a concurrent write to another part of the
// same chunk.
func TestMemoryConcurrentZeroAndWrite(t *testing.T) {
	for round := 0; round < 200; round++ {
		m := NewMemory(memChunkSize)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); m.Zero(0, 4096, true) }()
		go func() { defer wg.Done(); m.WriteAt([]byte{1, 2, 3}, 8192) }()
		wg.Wait()
		got := make([]byte, 3)
		m.ReadAt(got, 8192)
		if !bytes.Equal(got, []byte{1, 2, 3}) {
			t.Fatalf("round %d: write lost: % x", round, got)
		}
	}
}

func TestMemoryReadOnlyAndClose(t *testing.T) {
	m := NewMemory(1 << 20)
	if _, err := m.WriteAt([]byte{1}, 0); err != nil {
		t.Fatal(err)
	}
	m.readOnly = true
	if !m.ReadOnly() {
		t.Fatal("ReadOnly false")
	}
	wantWritesRefused(t, m, false)
	if err := m.Sync(); err != nil {
		t.Error(err)
	}
	if err := m.Close(); err != nil {
		t.Error(err)
	}
	if m.Allocated() != 0 {
		t.Errorf("Allocated after Close = %d", m.Allocated())
	}
}

func BenchmarkMemoryWrite2M(b *testing.B) {
	m := NewMemory(64 << 20)
	buf := bytes.Repeat([]byte{0x5a}, 2<<20)
	b.SetBytes(int64(len(buf)))
	for i := 0; b.Loop(); i++ {
		m.WriteAt(buf, int64(i%32)*int64(len(buf)))
	}
}

func BenchmarkMemoryRead2M(b *testing.B) {
	m := NewMemory(64 << 20)
	buf := bytes.Repeat([]byte{0x5a}, 2<<20)
	for i := 0; i < 32; i++ {
		m.WriteAt(buf, int64(i)*int64(len(buf)))
	}
	b.SetBytes(int64(len(buf)))
	for i := 0; b.Loop(); i++ {
		m.ReadAt(buf, int64(i%32)*int64(len(buf)))
	}
}
