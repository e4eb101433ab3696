package nbd

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// bkPatternByte is the definition: byte o%8 of the big-endian u64 o&^7.
func bkPatternByte(o uint64) byte {
	var w [8]byte
	binary.BigEndian.PutUint64(w[:], o&^7)
	return w[o&7]
}

func TestPatternKnownBytes(t *testing.T) {
	// What nbdkit's pattern plugin serves (nbdkit-pattern-plugin(1)).
	tests := []struct {
		off  int64
		want []byte
	}{
		{0, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8}},
		{8, []byte{0, 0, 0, 0, 0, 0, 0, 8}},
		{15, []byte{8, 0, 0, 0, 0, 0, 0, 0, 0x10}},
		{0x1000, []byte{0, 0, 0, 0, 0, 0, 0x10, 0}},
		{0x123456789a8, []byte{0, 0, 1, 0x23, 0x45, 0x67, 0x89, 0xa8}},
		{0x123456789ab, []byte{0x23, 0x45, 0x67, 0x89, 0xa8, 0, 0, 1, 0x23}},
		{0x0102030405060708, []byte{1, 2, 3, 4, 5, 6, 7, 8}},
	}
	for _, tt := range tests {
		got := make([]byte, len(tt.want))
		PatternFill(tt.off, got)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("PatternFill(%#x) = % x, want % x", tt.off, got, tt.want)
		}
	}
}

func TestPatternFillMatchesDefinition(t *testing.T) {
	offsets := []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 31, 33, 4093, 1 << 20, 1<<40 + 5, 1<<62 - 3}
	lengths := []int{0, 1, 2, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 4096, 4099}
	for _, off := range offsets {
		for _, n := range lengths {
			buf := make([]byte, n+2)
			buf[0], buf[n+1] = 0xee, 0xee
			PatternFill(off, buf[1:1+n])
			if buf[0] != 0xee || buf[n+1] != 0xee {
				t.Fatalf("PatternFill(%d, %d bytes) wrote outside the buffer", off, n)
			}
			for i := 0; i < n; i++ {
				if want := bkPatternByte(uint64(off) + uint64(i)); buf[1+i] != want {
					t.Fatalf("PatternFill(%d, %d bytes): byte %d = %#x, want %#x", off, n, i, buf[1+i], want)
				}
			}
			if bad, ok := PatternCheck(off, buf[1:1+n]); !ok {
				t.Fatalf("PatternCheck(%d, %d bytes) of a filled buffer: bad at %d", off, n, bad)
			}
		}
	}
}

func TestPatternCheckFindsEveryByte(t *testing.T) {
	for _, off := range []int64{0, 3, 8, 4096 - 5} {
		for _, n := range []int{1, 7, 8, 13, 40, 100} {
			buf := make([]byte, n)
			for i := 0; i < n; i++ {
				PatternFill(off, buf)
				buf[i] ^= 0x40
				bad, ok := PatternCheck(off, buf)
				if ok || bad != off+int64(i) {
					t.Fatalf("off %d, %d bytes, corrupt byte %d: PatternCheck = %d, %v", off, n, i, bad, ok)
				}
			}
		}
	}
}

func TestPatternCheck(t *testing.T) {
	const n = 2 << 20
	good := make([]byte, n)
	PatternFill(1<<30, good)
	tests := []struct {
		name    string
		off     int64 // offset checked against
		corrupt []int // byte indices to flip
		wantBad int64 // offset of the first bad byte, -1 = ok
	}{
		{"good", 1 << 30, nil, -1},
		{"first byte", 1 << 30, []int{0}, 1 << 30},
		{"last byte", 1 << 30, []int{n - 1}, 1<<30 + n - 1},
		{"middle of unrolled block", 1 << 30, []int{1<<20 + 17}, 1<<30 + 1<<20 + 17},
		{"two, first wins", 1 << 30, []int{4000, 3000}, 1<<30 + 3000},
		{"wrong offset", 1<<30 + 8, nil, 1<<30 + 8 + 7},
		{"off by a whole block", 1<<30 + 4096, nil, 1<<30 + 4096 + 6},
	}
	for _, tt := range tests {
		buf := bytes.Clone(good)
		for _, i := range tt.corrupt {
			buf[i] ^= 1
		}
		bad, ok := PatternCheck(tt.off, buf)
		if tt.wantBad < 0 {
			if !ok {
				t.Errorf("%s: PatternCheck = bad at %d, want ok", tt.name, bad)
			}
			continue
		}
		if ok || bad != tt.wantBad {
			t.Errorf("%s: PatternCheck = %d, %v; want bad at %d", tt.name, bad, ok, tt.wantBad)
		}
	}
	if _, ok := PatternCheck(5, nil); !ok {
		t.Error("PatternCheck of nothing failed")
	}
	// All zeroes are the pattern only for the first 8 bytes.
	if bad, ok := PatternCheck(0, make([]byte, 64)); ok || bad != 15 {
		t.Errorf("zeroes: PatternCheck = %d, %v; want bad at 15", bad, ok)
	}
}

func TestPatternBackend(t *testing.T) {
	const size = 16 << 20
	b := NewPattern(size)
	if b.Size() != size || !b.ReadOnly() {
		t.Fatalf("Size %d ReadOnly %v", b.Size(), b.ReadOnly())
	}
	tests := []struct {
		off int64
		n   int
	}{
		{0, 512}, {1, 511}, {size - 1, 1}, {size - 2<<20, 2 << 20}, {12345, 65536 + 3}, {size, 0},
	}
	for _, tt := range tests {
		buf := make([]byte, tt.n)
		n, err := b.ReadAt(buf, tt.off)
		if err != nil || n != tt.n {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", tt.off, tt.n, n, err)
		}
		if bad, ok := PatternCheck(tt.off, buf); !ok {
			t.Fatalf("ReadAt(%d, %d): bad byte at %d", tt.off, tt.n, bad)
		}
		ext, err := b.Extents(tt.off, int64(tt.n))
		if err != nil {
			t.Fatal(err)
		}
		bkCheckExtents(t, b, tt.off, int64(tt.n), ext)
		if tt.n > 0 && (len(ext) != 1 || ext[0].Flags != 0) {
			t.Errorf("Extents(%d, %d) = %v, want one data extent", tt.off, tt.n, ext)
		}
	}
	if _, err := b.WriteAt([]byte{0}, 0); bkErrno(err) != EPERM {
		t.Errorf("WriteAt: %v, want EPERM", err)
	}
	if err := b.Sync(); err != nil {
		t.Error(err)
	}
	if err := b.Close(); err != nil {
		t.Error(err)
	}
}

func BenchmarkPatternFill2M(b *testing.B) {
	buf := make([]byte, 2<<20)
	b.SetBytes(int64(len(buf)))
	for i := 0; b.Loop(); i++ {
		PatternFill(int64(i)*int64(len(buf))+3, buf)
	}
}

func BenchmarkPatternCheck2M(b *testing.B) {
	buf := make([]byte, 2<<20)
	PatternFill(1<<20, buf)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if _, ok := PatternCheck(1<<20, buf); !ok {
			b.Fatal("mismatch")
		}
	}
}
