package interop

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"testing"
)

// writeRandomImage creates a raw image of size bytes at path: random data,
// with every fourth MiB left as a hole and every seventh written as zeroes,
// so that copies exercise both data and zero handling. It returns the
// contents.
func writeRandomImage(t testing.TB, path string, size int64, seed uint64) []byte {
	t.Helper()
	data := make([]byte, size)
	rng := rand.New(rand.NewChaCha8(seedBytes(seed)))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < size; off += mib {
		n := min(int64(mib), size-off)
		chunk := data[off : off+n]
		switch i := off / mib; {
		case i%4 == 3:
			continue // hole
		case i%7 == 6:
			// explicit zeroes
		default:
			fillRandom(rng, chunk)
		}
		if _, err := f.WriteAt(chunk, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return data
}

func seedBytes(seed uint64) [32]byte {
	var s [32]byte
	for i := range 4 {
		v := seed + uint64(i)*0x9e3779b97f4a7c15
		for j := range 8 {
			s[8*i+j] = byte(v >> (8 * j))
		}
	}
	return s
}

func fillRandom(rng *rand.Rand, p []byte) {
	for len(p) >= 8 {
		v := rng.Uint64()
		for j := range 8 {
			p[j] = byte(v >> (8 * j))
		}
		p = p[8:]
	}
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
}

// sameBytes fails the test at the first difference between want and got.
func sameBytes(t testing.TB, what string, want, got []byte) {
	t.Helper()
	if bytes.Equal(want, got) {
		return
	}
	if len(want) != len(got) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			end := min(i+16, len(want))
			t.Fatalf("%s: first difference at offset %d: got % x, want % x", what, i, got[i:end], want[i:end])
		}
	}
}

// readFile reads a whole file or fails the test.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// patternByte is byte p of nbdkit's pattern plugin (and nbdscope's pattern
// backend): every aligned 8 bytes hold their offset as a big-endian u64.
func patternByte(p int64) byte {
	base := uint64(p) &^ 7
	return byte(base >> (8 * (7 - uint64(p)&7)))
}

// patternBytes returns the pattern for [off, off+n).
func patternBytes(off int64, n int) []byte {
	base := off &^ 7
	buf := make([]byte, (off-base)+int64(n)+8)
	for i := 0; i+8 <= len(buf); i += 8 {
		binary.BigEndian.PutUint64(buf[i:], uint64(base)+uint64(i))
	}
	return buf[off-base : off-base+int64(n)]
}

// checkPattern verifies that b holds the pattern starting at offset off.
func checkPattern(t testing.TB, what string, b []byte, off int64) {
	t.Helper()
	want := patternBytes(off, len(b))
	if bytes.Equal(b, want) {
		return
	}
	for i := range b {
		if b[i] != want[i] {
			lo := max(0, i-8)
			t.Fatalf("%s: pattern mismatch at offset %d: got 0x%02x, want 0x%02x (bytes from %d: % x)",
				what, off+int64(i), b[i], want[i], off+int64(lo), b[lo:min(len(b), lo+24)])
		}
	}
}

// TestPatternHelper checks patternBytes against the byte-wise definition
// and the nbdkit-pattern-plugin(1) example (0x28 at offset 0x28+7).
func TestPatternHelper(t *testing.T) {
	for _, off := range []int64{0, 1, 7, 8, 13, 4095, 1<<32 - 3} {
		b := patternBytes(off, 37)
		for i := range b {
			if b[i] != patternByte(off+int64(i)) {
				t.Fatalf("patternBytes(%d)[%d] = %#x, want %#x", off, i, b[i], patternByte(off+int64(i)))
			}
		}
	}
	if b := patternBytes(0x28, 8); !bytes.Equal(b, []byte{0, 0, 0, 0, 0, 0, 0, 0x28}) {
		t.Fatalf("pattern at 0x28 = % x", b)
	}
}
