package nbd

import (
	"testing"
)

func TestNullRead(t *testing.T) {
	const size = 64 << 20
	tests := []struct {
		name string
		fill byte
		off  int64
		n    int
	}{
		{"empty", 0xff, 0, 0},
		{"one byte", 0xff, 7, 1},
		{"sector", 0xff, 512, 512},
		{"just under template", 0xff, 0, nullTemplateSize - 1},
		{"template", 0xff, 0, nullTemplateSize},
		{"template plus one", 0xff, 3, nullTemplateSize + 1},
		{"2 MiB", 0xff, 2 << 20, 2 << 20},
		{"odd length", 0xab, 1, 3<<20 + 7},
		{"32 MiB", 0x01, size - 32<<20, 32 << 20},
		{"zero fill", 0, 4096, 2 << 20},
		{"zero fill small", 0, 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewNull(size, tt.fill)
			if b.Fill() != tt.fill || b.Size() != size {
				t.Fatalf("Fill/Size = %#x/%d", b.Fill(), b.Size())
			}
			buf := make([]byte, tt.n+2)
			for i := range buf {
				buf[i] = ^tt.fill // anything but the fill byte
			}
			n, err := b.ReadAt(buf[1:1+tt.n], tt.off)
			if err != nil || n != tt.n {
				t.Fatalf("ReadAt = %d, %v", n, err)
			}
			for i, c := range buf[1 : 1+tt.n] {
				if c != tt.fill {
					t.Fatalf("byte %d = %#x, want %#x", i, c, tt.fill)
				}
			}
			if buf[0] != ^tt.fill || buf[tt.n+1] != ^tt.fill {
				t.Fatalf("ReadAt wrote outside its buffer")
			}
		})
	}
}

func TestNullWriteTrimZeroExtents(t *testing.T) {
	b := NewNull(1<<20, 0xff)
	if b.ReadOnly() {
		t.Fatal("NewNull is read-only")
	}
	tests := []struct {
		name string
		op   func() error
	}{
		{"write", func() error {
			n, err := b.WriteAt(make([]byte, 4096), 8192)
			if err == nil && n != 4096 {
				t.Errorf("WriteAt returned %d", n)
			}
			return err
		}},
		{"trim", func() error { return b.Trim(0, 1<<20) }},
		{"zero", func() error { return b.Zero(512, 1024, false) }},
		{"zero may trim", func() error { return b.Zero(512, 1024, true) }},
		{"sync", b.Sync},
		{"close", b.Close},
	}
	for _, tt := range tests {
		if err := tt.op(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	// Writes and zeroes leave no trace.
	buf := make([]byte, 2048)
	if _, err := b.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	for i, c := range buf {
		if c != 0xff {
			t.Fatalf("byte %d = %#x after zero, want 0xff", i, c)
		}
	}
	for _, r := range []struct{ off, n int64 }{{0, 1 << 20}, {512, 4096}, {1<<20 - 1, 1}} {
		ext, err := b.Extents(r.off, r.n)
		if err != nil {
			t.Fatal(err)
		}
		if len(ext) != 1 || ext[0] != (Extent{Length: uint64(r.n), Flags: 0}) {
			t.Errorf("Extents(%d, %d) = %v, want one data extent", r.off, r.n, ext)
		}
	}
	if ext, err := b.Extents(1<<20, 0); err != nil || len(ext) != 0 {
		t.Errorf("Extents of nothing = %v, %v", ext, err)
	}
}

func TestNullReadOnly(t *testing.T) {
	b := NewNull(4096, 0)
	b.readOnly = true
	wantWritesRefused(t, b, true)
	if _, err := b.ReadAt(make([]byte, 512), 0); err != nil {
		t.Errorf("ReadAt: %v", err)
	}
}

func TestNullConcurrentReads(t *testing.T) {
	b := NewNull(64<<20, 0xff)
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func() {
			buf := make([]byte, 256<<10)
			for i := 0; i < 20; i++ {
				if _, err := b.ReadAt(buf, int64(i)*(256<<10)); err != nil {
					done <- err
					return
				}
				if buf[len(buf)-1] != 0xff {
					done <- errBackendReadOnly("test", "bad fill")
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// 2 MiB reads must be memmoves, not a byte loop: this should run at many
// GiB/s.
func BenchmarkNullRead2M(b *testing.B) {
	n := NewNull(1<<30, 0xff)
	buf := make([]byte, 2<<20)
	b.SetBytes(int64(len(buf)))
	for i := 0; b.Loop(); i++ {
		n.ReadAt(buf, int64(i%512)*int64(len(buf)))
	}
}
