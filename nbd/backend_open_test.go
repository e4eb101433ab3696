package nbd

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nbdscope/shellword"
)

// wantWritesRefused checks that a read-only backend refuses every write
// (WriteAt, Trim, Zero with mayTrim) with EPERM.
func wantWritesRefused(t *testing.T, b mutableBackend, mayTrim bool) {
	t.Helper()
	if _, err := b.WriteAt([]byte{1}, 0); bkErrno(err) != EPERM {
		t.Errorf("WriteAt: %v, want EPERM", err)
	}
	if err := b.Trim(0, 512); bkErrno(err) != EPERM {
		t.Errorf("Trim: %v, want EPERM", err)
	}
	if err := b.Zero(0, 512, mayTrim); bkErrno(err) != EPERM {
		t.Errorf("Zero: %v, want EPERM", err)
	}
}

// bkErrno returns the Errno wrapped in err (0 for nil, -1 for an error
// without one).
func bkErrno(err error) Errno {
	if err == nil {
		return 0
	}
	if e, ok := errors.AsType[Errno](err); ok {
		return e
	}
	return ^Errno(0)
}

// bkCheckExtents verifies the Extenter contract for [off, off+length):
// nonzero lengths that add up exactly, adjacent runs of different flags,
// only known flags; and that holes read as zero when b can be read.
func bkCheckExtents(t *testing.T, b Backend, off, length int64, ext []Extent) {
	t.Helper()
	var sum uint64
	for i, e := range ext {
		if e.Length == 0 {
			t.Errorf("Extents(%d, %d): extent %d has length 0: %v", off, length, i, ext)
		}
		if e.Flags&^(StateHole|StateZero) != 0 {
			t.Errorf("Extents(%d, %d): extent %d has unknown flags %#x", off, length, i, e.Flags)
		}
		if i > 0 && ext[i-1].Flags == e.Flags {
			t.Errorf("Extents(%d, %d): extents %d and %d not merged: %v", off, length, i-1, i, ext)
		}
		if e.Flags&StateZero != 0 && e.Length <= 16<<20 {
			buf := make([]byte, e.Length)
			if _, err := b.ReadAt(buf, off+int64(sum)); err != nil {
				t.Errorf("reading zero extent at %d: %v", off+int64(sum), err)
			} else if i := bkFirstNonZero(buf); i >= 0 {
				t.Errorf("Extents(%d, %d): extent at %d marked zero but byte %d is %#x",
					off, length, off+int64(sum), off+int64(sum)+int64(i), buf[i])
			}
		}
		sum += e.Length
	}
	if sum != uint64(length) {
		t.Errorf("Extents(%d, %d): lengths add up to %d: %v", off, length, sum, ext)
	}
}

func bkFirstNonZero(p []byte) int {
	for i, c := range p {
		if c != 0 {
			return i
		}
	}
	return -1
}

// bkOther is a Backend of a type this package does not know.
type bkOther struct{ Null }

type bkCoherentOther struct {
	Null
	coherent bool
}

func (b *bkCoherentOther) Coherent() bool { return b.coherent }

func TestOpenBackend(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.img")
	if err := os.WriteFile(existing, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	// Empty files, as mktemp or touch make them: a size given extends them.
	empty, colon := filepath.Join(dir, "empty.img"), filepath.Join(dir, "a:b.img")
	for _, p := range []string{empty, colon} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name     string
		spec     string
		size     int64
		opts     BackendOptions
		wantType string
		wantSize int64
		readOnly bool
		errPart  string
	}{
		{name: "null", spec: "null", size: 1 << 20, opts: BackendOptions{Fill: 0xff}, wantType: "*nbd.Null", wantSize: 1 << 20},
		{name: "null read-only", spec: "null", size: 4096, opts: BackendOptions{ReadOnly: true}, wantType: "*nbd.Null", wantSize: 4096, readOnly: true},
		{name: "pattern", spec: "pattern", size: 1 << 30, wantType: "*nbd.Pattern", wantSize: 1 << 30, readOnly: true},
		{name: "memory", spec: "memory", size: 64 << 20, wantType: "*nbd.Memory", wantSize: 64 << 20},
		{name: "memory read-only", spec: "memory", size: 512, opts: BackendOptions{ReadOnly: true}, wantType: "*nbd.Memory", wantSize: 512, readOnly: true},
		{name: "file empty, sized", spec: "file:" + empty, size: 1 << 20, wantType: "*nbd.File", wantSize: 1 << 20},
		{name: "file existing", spec: "file:" + existing, wantType: "*nbd.File", wantSize: 8192},
		{name: "file existing read-only", spec: "file:" + existing, opts: BackendOptions{ReadOnly: true}, wantType: "*nbd.File", wantSize: 8192, readOnly: true},
		{name: "file path with colon", spec: "file:" + colon, size: 4096, wantType: "*nbd.File", wantSize: 4096},

		{name: "unknown", spec: "disk", size: 4096, errPart: `unknown backend "disk": want null, pattern, memory or file:PATH`},
		{name: "empty", spec: "", size: 4096, errPart: `unknown backend ""`},
		{name: "case", spec: "NULL", size: 4096, errPart: "unknown backend"},
		{name: "null with arg", spec: "null:1", size: 4096, errPart: "unknown backend"},
		{name: "file without path", spec: "file", size: 4096, errPart: "needs a path"},
		{name: "file empty path", spec: "file:", size: 4096, errPart: "needs a path"},
		{name: "null no size", spec: "null", size: 0, errPart: "needs a size"},
		{name: "memory negative", spec: "memory", size: -512, errPart: "needs a size"},
		{name: "pattern unaligned", spec: "pattern", size: 1000, errPart: "not a multiple of 512"},
		{name: "file missing no size", spec: "file:" + filepath.Join(dir, "missing.img"), errPart: "no such image; nbdscope never creates an image: create it with `truncate -s 1G "},
		{name: "file missing, sized", spec: "file:" + filepath.Join(dir, "new.img"), size: 1 << 20, errPart: "no such image"},
		{name: "file size mismatch", spec: "file:" + existing, size: 4096, errPart: "refusing to resize"},
		{name: "file unaligned", spec: "file:" + empty, size: 1000, errPart: "not a multiple of 512"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := OpenBackend(tt.spec, tt.size, tt.opts)
			if tt.errPart != "" {
				if err == nil {
					t.Fatalf("OpenBackend(%q, %d) succeeded, want error containing %q", tt.spec, tt.size, tt.errPart)
				}
				if !strings.Contains(err.Error(), tt.errPart) {
					t.Fatalf("OpenBackend(%q, %d) error %q, want it to contain %q", tt.spec, tt.size, err, tt.errPart)
				}
				return
			}
			if err != nil {
				t.Fatalf("OpenBackend(%q, %d): %v", tt.spec, tt.size, err)
			}
			if c, ok := b.(Closer); ok {
				defer c.Close()
			}
			if got := typeName(b); got != tt.wantType {
				t.Errorf("type %s, want %s", got, tt.wantType)
			}
			if b.Size() != tt.wantSize {
				t.Errorf("Size() = %d, want %d", b.Size(), tt.wantSize)
			}
			if got := BackendReadOnly(b); got != tt.readOnly {
				t.Errorf("BackendReadOnly = %v, want %v", got, tt.readOnly)
			}
			if !BackendCoherent(b) {
				t.Errorf("BackendCoherent = false, want true")
			}
			_, werr := b.WriteAt(make([]byte, 512), 0)
			if tt.readOnly {
				if bkErrno(werr) != EPERM {
					t.Errorf("write to read-only backend: %v, want EPERM", werr)
				}
				if tr, ok := b.(Trimmer); ok {
					if err := tr.Trim(0, 512); bkErrno(err) != EPERM {
						t.Errorf("trim of read-only backend: %v, want EPERM", err)
					}
				}
				if z, ok := b.(Zeroer); ok {
					if err := z.Zero(0, 512, true); bkErrno(err) != EPERM {
						t.Errorf("zero of read-only backend: %v, want EPERM", err)
					}
				}
			} else if werr != nil {
				t.Errorf("write: %v", werr)
			}
		})
	}
}

func typeName(v any) string {
	switch v.(type) {
	case *Null:
		return "*nbd.Null"
	case *Pattern:
		return "*nbd.Pattern"
	case *Memory:
		return "*nbd.Memory"
	case *File:
		return "*nbd.File"
	}
	return "other"
}

func TestOpenBackendFill(t *testing.T) {
	for _, fill := range []byte{0, DefaultNullFill, 0x5a} {
		b, err := OpenBackend("null", 4096, BackendOptions{Fill: fill})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 100)
		if _, err := b.ReadAt(buf, 17); err != nil {
			t.Fatal(err)
		}
		for i, c := range buf {
			if c != fill {
				t.Fatalf("fill %#x: byte %d is %#x", fill, i, c)
			}
		}
	}
}

// TestBackendTraits: what the server asks of a backend, whether its
// reads see its writes at once (BackendCoherent) and whether it refuses
// writes (BackendReadOnly), for each backend and for types it does not
// know.
func TestBackendTraits(t *testing.T) {
	f := bkOpenTempFile(t, 4096)
	tests := []struct {
		name               string
		b                  Backend
		coherent, readOnly bool
	}{
		{"null", NewNull(512, 0), true, false},
		{"pattern", NewPattern(512), true, true},
		{"memory", NewMemory(512), true, false},
		{"file", f, true, false},
		{"unknown type", &bkOther{}, false, false}, // ReadOnly promoted from the embedded Null
		{"unknown type saying yes", &bkCoherentOther{coherent: true}, true, false},
		{"unknown type saying no", &bkCoherentOther{coherent: false}, false, false},
		{"nil", nil, false, false},
	}
	for _, tt := range tests {
		if got := BackendCoherent(tt.b); got != tt.coherent {
			t.Errorf("%s: BackendCoherent = %v, want %v", tt.name, got, tt.coherent)
		}
		if got := BackendReadOnly(tt.b); got != tt.readOnly {
			t.Errorf("%s: BackendReadOnly = %v, want %v", tt.name, got, tt.readOnly)
		}
	}
}

// TestBackendRanges checks the bounds checks every backend shares.
func TestBackendRanges(t *testing.T) {
	const size = 1 << 20
	f := bkOpenTempFile(t, size)
	backends := []struct {
		name     string
		b        Backend
		readOnly bool
	}{
		{"null", NewNull(size, 0xff), false},
		{"pattern", NewPattern(size), true},
		{"memory", NewMemory(size), false},
		{"file", f, false},
	}
	tests := []struct {
		name      string
		off, n    int64
		readErr   Errno // also trims and block status
		writeErr  Errno // also zeroes
		zeroRange bool
	}{
		{name: "start", off: 0, n: 4096},
		{name: "end", off: size - 4096, n: 4096},
		{name: "whole", off: 0, n: size},
		{name: "empty at end", off: size, n: 0},
		{name: "one byte", off: 12345, n: 1},
		{name: "negative offset", off: -512, n: 512, readErr: EINVAL, writeErr: ENOSPC},
		{name: "crosses end", off: size - 512, n: 1024, readErr: EINVAL, writeErr: ENOSPC},
		{name: "past end", off: size, n: 512, readErr: EINVAL, writeErr: ENOSPC},
		{name: "far past end", off: 1 << 62, n: 512, readErr: EINVAL, writeErr: ENOSPC},
		{name: "overflowing", off: size - 512, n: 1<<63 - 1, readErr: EINVAL, writeErr: ENOSPC},
	}
	for _, bk := range backends {
		for _, tt := range tests {
			t.Run(bk.name+"/"+tt.name, func(t *testing.T) {
				if tt.n < 1<<24 {
					buf := make([]byte, tt.n)
					n, err := bk.b.ReadAt(buf, tt.off)
					if bkErrno(err) != tt.readErr {
						t.Errorf("ReadAt: %v, want errno %v", err, tt.readErr)
					}
					if err == nil && n != len(buf) {
						t.Errorf("ReadAt returned %d of %d bytes without error", n, len(buf))
					}
					n, err = bk.b.WriteAt(buf, tt.off)
					want := tt.writeErr
					if bk.readOnly {
						want = EPERM
					}
					if bkErrno(err) != want {
						t.Errorf("WriteAt: %v, want errno %v", err, want)
					}
					if err == nil && n != len(buf) {
						t.Errorf("WriteAt returned %d of %d bytes without error", n, len(buf))
					}
				}
				if tr, ok := bk.b.(Trimmer); ok {
					if err := tr.Trim(tt.off, tt.n); bkErrno(err) != tt.readErr {
						t.Errorf("Trim: %v, want errno %v", err, tt.readErr)
					}
				}
				if z, ok := bk.b.(Zeroer); ok {
					if err := z.Zero(tt.off, tt.n, true); bkErrno(err) != tt.writeErr {
						t.Errorf("Zero: %v, want errno %v", err, tt.writeErr)
					}
				}
				if e, ok := bk.b.(Extenter); ok {
					ext, err := e.Extents(tt.off, tt.n)
					if bkErrno(err) != tt.readErr {
						t.Errorf("Extents: %v, want errno %v", err, tt.readErr)
					}
					if err == nil {
						bkCheckExtents(t, bk.b, tt.off, tt.n, ext)
					}
				}
			})
		}
	}
}

func TestBackendAppendExtent(t *testing.T) {
	tests := []struct {
		name string
		in   []Extent
		add  Extent
		want []Extent
	}{
		{"to empty", nil, Extent{10, 0}, []Extent{{10, 0}}},
		{"zero length dropped", nil, Extent{0, 3}, nil},
		{"merge", []Extent{{10, 3}}, Extent{5, 3}, []Extent{{15, 3}}},
		{"no merge", []Extent{{10, 3}}, Extent{5, 0}, []Extent{{10, 3}, {5, 0}}},
	}
	for _, tt := range tests {
		got := backendAppendExtent(tt.in, tt.add.Length, tt.add.Flags)
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
			}
		}
	}
}

// The errors of read-only and out-of-range requests read well.
func TestBackendErrorMessages(t *testing.T) {
	_, err := NewPattern(4096).WriteAt([]byte{1}, 0)
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("pattern write error %v, want it to mention read-only", err)
	}
	_, err = NewMemory(4096).ReadAt(make([]byte, 512), 4096)
	if err == nil || !strings.Contains(err.Error(), "beyond the end") || errors.Is(err, io.EOF) {
		t.Errorf("memory read past end: %v", err)
	}
}

// TestOpenBackendNeverCreates: a file: backend whose image does not exist
// is refused, with or without a size, and no file appears (issue 21: run
// --backend file:/tmp/nope.img made a 64 GiB sparse file).
func TestOpenBackendNeverCreates(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		path     string
		size     int64
		readOnly bool
	}{
		{filepath.Join(dir, "nope.img"), 64 << 30, false},
		{filepath.Join(dir, "nope.img"), 0, false},
		{filepath.Join(dir, "my disk.img"), 1 << 20, true},
	} {
		_, err := OpenBackend("file:"+c.path, c.size, BackendOptions{ReadOnly: c.readOnly})
		if !errors.Is(err, ErrNoImage) {
			t.Errorf("%s size %d: %v, want ErrNoImage", c.path, c.size, err)
		}
		want := "nbdscope never creates an image: create it with `truncate -s 1G " + shellword.Quote(c.path) + "` or `qemu-img create"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q lacks %q", c.path, err, want)
		}
		if _, serr := os.Stat(c.path); serr == nil {
			t.Errorf("%s was created", c.path)
		}
	}
}
