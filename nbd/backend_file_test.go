package nbd

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestOpenFile(t *testing.T) {
	type setup struct {
		exists  bool
		content int // bytes of 0x11 to write first
	}
	tests := []struct {
		name     string
		setup    setup
		size     int64
		readOnly bool
		dir      bool
		wantSize int64
		errPart  string
	}{
		{name: "create", size: 1 << 20, wantSize: 1 << 20},
		{name: "create small", size: 512, wantSize: 512},
		{name: "missing without size", errPart: "does not exist; give a size"},
		{name: "missing read-only", size: 4096, readOnly: true, errPart: "read-only mode does not create it"},
		{name: "existing, size from file", setup: setup{true, 8192}, wantSize: 8192},
		{name: "existing, same size", setup: setup{true, 8192}, size: 8192, wantSize: 8192},
		{name: "existing, read-only", setup: setup{true, 4096}, readOnly: true, wantSize: 4096},
		{name: "existing, bigger size", setup: setup{true, 8192}, size: 16384, errPart: "is 8192 bytes, not the 16384 bytes asked for"},
		{name: "existing, smaller size", setup: setup{true, 8192}, size: 4096, errPart: "refusing to resize"},
		{name: "existing, unaligned", setup: setup{true, 1000}, errPart: "is 1000 bytes, not a multiple of 512"},
		{name: "existing empty, no size", setup: setup{true, 0}, errPart: "is empty; give a size"},
		{name: "existing empty, size", setup: setup{true, 0}, size: 4096, wantSize: 4096},
		{name: "existing empty, read-only", setup: setup{true, 0}, size: 4096, readOnly: true, errPart: "refusing to resize"},
		{name: "unaligned size", size: 1000, errPart: "size 1000 is not a multiple of 512"},
		{name: "negative size", size: -512, errPart: "negative size"},
		{name: "directory", dir: true, size: 0, errPart: "directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "disk.img")
			var orig []byte
			if tt.setup.exists {
				orig = bytes.Repeat([]byte{0x11}, tt.setup.content)
				if err := os.WriteFile(path, orig, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tt.dir {
				path = t.TempDir()
			}
			f, err := OpenFile(path, tt.size, tt.readOnly)
			if tt.errPart != "" {
				if err == nil {
					f.Close()
					t.Fatalf("OpenFile succeeded, want error containing %q", tt.errPart)
				}
				if !strings.Contains(err.Error(), tt.errPart) {
					t.Fatalf("error %q, want it to contain %q", err, tt.errPart)
				}
				if !tt.dir {
					// The file is untouched, or still absent.
					got, rerr := os.ReadFile(path)
					switch {
					case tt.setup.exists && !bytes.Equal(got, orig):
						t.Errorf("failed OpenFile changed the file: %d bytes", len(got))
					case !tt.setup.exists && !errors.Is(rerr, os.ErrNotExist):
						t.Errorf("failed OpenFile left a file behind")
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("OpenFile: %v", err)
			}
			defer f.Close()
			if f.Size() != tt.wantSize || f.ReadOnly() != tt.readOnly || f.Path() != path {
				t.Errorf("Size %d ReadOnly %v Path %q", f.Size(), f.ReadOnly(), f.Path())
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() != tt.wantSize {
				t.Errorf("file is %d bytes, want %d", st.Size(), tt.wantSize)
			}
			if !tt.setup.exists && st.Mode().Perm()&0o600 != 0o600 {
				t.Errorf("created file has mode %v", st.Mode())
			}
			if len(orig) > 0 {
				buf := make([]byte, len(orig))
				if _, err := f.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, orig) {
					t.Errorf("existing content not read back: %v", err)
				}
			}
		})
	}
}

func bkOpenTempFile(t *testing.T, size int64) *File {
	t.Helper()
	f, err := OpenFile(filepath.Join(t.TempDir(), "disk.img"), size, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestFileReadWrite(t *testing.T) {
	const size = 4 << 20
	f := bkOpenTempFile(t, size)
	tests := []struct {
		off int64
		n   int
	}{
		{0, 512}, {1, 1}, {4095, 2}, {size - 512, 512}, {1 << 20, 2 << 20}, {12345, 65537},
	}
	for _, tt := range tests {
		buf := make([]byte, tt.n)
		PatternFill(tt.off, buf)
		if err := bkWriteReadBack(f, buf, make([]byte, tt.n), tt.off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	// Reading the last byte gives no io.EOF.
	if n, err := f.ReadAt(make([]byte, 1), size-1); n != 1 || err != nil {
		t.Errorf("ReadAt of the last byte = %d, %v", n, err)
	}
}

func TestFileShortRead(t *testing.T) {
	const size = 1 << 20
	f := bkOpenTempFile(t, size)
	// Someone truncates the image under us.
	if err := os.Truncate(f.Path(), size/2); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		off   int64
		n     int
		short bool
	}{
		{0, 4096, false},
		{size/2 - 512, 512, false},
		{size/2 - 512, 1024, true},
		{size - 512, 512, true},
	}
	for _, tt := range tests {
		_, err := f.ReadAt(make([]byte, tt.n), tt.off)
		if !tt.short {
			if err != nil {
				t.Errorf("ReadAt(%d, %d): %v", tt.off, tt.n, err)
			}
			continue
		}
		if bkErrno(err) != EIO || !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			t.Errorf("ReadAt(%d, %d) = %v, want a short-read error wrapping EIO", tt.off, tt.n, err)
		}
		if err != nil && !strings.Contains(err.Error(), "short read") {
			t.Errorf("error %q does not say short read", err)
		}
	}
}

func TestFileReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.img")
	if err := os.WriteFile(path, bytes.Repeat([]byte{7}, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wantWritesRefused(t, f, true)
	buf := make([]byte, 4096)
	if _, err := f.ReadAt(buf, 0); err != nil || buf[4095] != 7 {
		t.Errorf("ReadAt: %v", err)
	}
}

// bkFileFallback selects which OS features TestFileTrimZero pretends are
// missing, to test the write-zeroes fallbacks on Linux too.
var bkFileFallbacks = []struct {
	name                 string
	noPunch, noZeroRange bool
}{
	{"native", false, false},
	{"no punch", true, false},
	{"no zero range", false, true},
	{"write zeroes", true, true},
}

func TestFileTrimZero(t *testing.T) {
	const size = 4 << 20
	ops := []struct {
		name   string
		off, n int64
		kind   string // "trim", "zero", "zero-nohole"
	}{
		{name: "trim aligned", off: 1 << 20, n: 1 << 20, kind: "trim"},
		{name: "trim unaligned", off: 1000, n: 10000, kind: "trim"},
		{name: "zero aligned", off: 2 << 20, n: 512 << 10, kind: "zero"},
		{name: "zero no hole", off: 3 << 20, n: 256 << 10, kind: "zero-nohole"},
		{name: "zero unaligned", off: 3<<20 + 777, n: 12345, kind: "zero-nohole"},
		{name: "trim to end", off: size - 4096, n: 4096, kind: "trim"},
		{name: "zero large", off: 0, n: size, kind: "zero"},
		{name: "empty", off: 512, n: 0, kind: "zero"},
	}
	for _, fb := range bkFileFallbacks {
		for _, op := range ops {
			t.Run(fb.name+"/"+op.name, func(t *testing.T) {
				f := bkOpenTempFile(t, size)
				f.noPunch.Store(fb.noPunch)
				f.noZeroRange.Store(fb.noZeroRange)
				full := bytes.Repeat([]byte{0xa5}, size)
				if _, err := f.WriteAt(full, 0); err != nil {
					t.Fatal(err)
				}
				var err error
				switch op.kind {
				case "trim":
					err = f.Trim(op.off, op.n)
				case "zero":
					err = f.Zero(op.off, op.n, true)
				case "zero-nohole":
					err = f.Zero(op.off, op.n, false)
				}
				if err != nil {
					t.Fatalf("%s(%d, %d): %v", op.kind, op.off, op.n, err)
				}
				got := make([]byte, size)
				if _, err := f.ReadAt(got, 0); err != nil {
					t.Fatal(err)
				}
				want := full
				clear(want[op.off : op.off+op.n])
				if !bytes.Equal(got, want) {
					for i := range got {
						if got[i] != want[i] {
							t.Fatalf("byte %d = %#x after %s(%d, %d), want %#x", i, got[i], op.kind, op.off, op.n, want[i])
						}
					}
				}
				st, _ := os.Stat(f.Path())
				if st.Size() != size {
					t.Errorf("file size changed to %d", st.Size())
				}
				ext, err := f.Extents(0, size)
				if err != nil {
					t.Fatal(err)
				}
				bkCheckExtents(t, f, 0, size, ext)
				// Where punching works, an aligned trim leaves a hole.
				if op.name == "trim aligned" && !fb.noPunch && bkFileHolesSupported(t, bkOpenTempFile(t, 4096)) {
					if !bkExtentsEqual(ext, []Extent{{1 << 20, 0}, {1 << 20, 3}, {2 << 20, 0}}) {
						t.Errorf("after punching: Extents = %v", ext)
					}
				}
			})
		}
	}
}

func TestFileExtents(t *testing.T) {
	const size = 8 << 20
	f := bkOpenTempFile(t, size)
	supported := bkFileHolesSupported(t, f)

	// A fresh file is one hole (or, without SEEK_HOLE, all data).
	ext, err := f.Extents(0, size)
	if err != nil {
		t.Fatal(err)
	}
	bkCheckExtents(t, f, 0, size, ext)
	if supported && (len(ext) != 1 || ext[0].Flags != StateHole|StateZero) {
		t.Errorf("fresh file: Extents = %v, want one hole", ext)
	}
	if !supported && (len(ext) != 1 || ext[0].Flags != 0) {
		t.Errorf("no SEEK_HOLE: Extents = %v, want one data extent", ext)
	}

	// Data at 1 MiB and 5 MiB.
	data := bytes.Repeat([]byte{1}, 1<<20)
	for _, off := range []int64{1 << 20, 5 << 20} {
		if _, err := f.WriteAt(data, off); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		off, n int64
		want   []Extent // when holes are supported
	}{
		{0, size, []Extent{{1 << 20, 3}, {1 << 20, 0}, {3 << 20, 3}, {1 << 20, 0}, {2 << 20, 3}}},
		{0, 1 << 20, []Extent{{1 << 20, 3}}},
		{512 << 10, 1 << 20, []Extent{{512 << 10, 3}, {512 << 10, 0}}},
		{1<<20 + 4096, 4096, []Extent{{4096, 0}}},
		{6<<20 - 4096, 8192, []Extent{{4096, 0}, {4096, 3}}},
		{size - 4096, 4096, []Extent{{4096, 3}}},
		{size, 0, nil},
	}
	for _, tt := range tests {
		ext, err := f.Extents(tt.off, tt.n)
		if err != nil {
			t.Fatal(err)
		}
		bkCheckExtents(t, f, tt.off, tt.n, ext)
		if supported && !bkExtentsEqual(ext, tt.want) {
			t.Errorf("Extents(%d, %d) = %v, want %v", tt.off, tt.n, ext, tt.want)
		}
	}

	// Trim makes a hole again.
	if err := f.Trim(1<<20, 1<<20); err != nil {
		t.Fatal(err)
	}
	ext, err = f.Extents(0, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	if supported && !bkExtentsEqual(ext, []Extent{{4 << 20, 3}}) {
		t.Errorf("after trim: Extents = %v, want one hole", ext)
	}

	// Without SEEK_DATA everything is data.
	f.noSeekData.Store(true)
	ext, err = f.Extents(0, size)
	if err != nil || !bkExtentsEqual(ext, []Extent{{size, 0}}) {
		t.Errorf("fallback: Extents = %v, %v; want all data", ext, err)
	}
}

func bkExtentsEqual(a, b []Extent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// bkFileHolesSupported reports whether the OS and the file system of the
// test's temporary directory report holes (Linux with ext4, xfs, tmpfs, …).
func bkFileHolesSupported(t *testing.T, f *File) bool {
	t.Helper()
	ext, err := f.Extents(0, f.Size())
	if err != nil {
		t.Fatal(err)
	}
	ok := len(ext) == 1 && ext[0].Flags != 0
	if !ok {
		t.Logf("holes are not reported here (%v); checking only the all-data fallback", ext)
	}
	return ok
}

func TestFileConcurrent(t *testing.T) {
	const (
		size    = 4 << 20
		workers = 6
		block   = 64 << 10
	)
	f := bkOpenTempFile(t, size)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			buf := make([]byte, block)
			got := make([]byte, block)
			for i := w; i < size/block; i += workers {
				off := int64(i) * block
				PatternFill(off, buf)
				if err := bkWriteReadBack(f, buf, got, off); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					f.Extents(0, size)
				}
			}
		}(w)
	}
	wg.Wait()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	all, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	if bad, ok := PatternCheck(0, all); !ok {
		t.Errorf("file on disk: bad byte at %d", bad)
	}
}

func TestFileClose(t *testing.T) {
	f, err := OpenFile(filepath.Join(t.TempDir(), "c.img"), 4096, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, 512), 0); err == nil {
		t.Error("ReadAt after Close succeeded")
	}
}
