package nbd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"nbdscope/shellword"
)

// DefaultNullFill is the byte the null backend returns by default: not zero,
// so that no client can skip the data as zeroes.
const DefaultNullFill byte = 0xff

// BackendOptions tune OpenBackend.
type BackendOptions struct {
	// Fill is the byte the null backend reads as. The zero value means 0x00;
	// callers normally pass DefaultNullFill (0xff).
	Fill byte
	// ReadOnly rejects writes, trims and zeroes with EPERM. The pattern
	// backend is always read-only.
	ReadOnly bool
}

// OpenBackend opens the backend named by spec: "null", "pattern", "memory"
// or "file:PATH". size is the export size in bytes: required (> 0, a
// multiple of 512) for null, pattern and memory; for a file, 0 means the
// size of the existing file (see OpenFile). A file that does not exist is
// refused (CheckImage): nbdscope never creates a user's image.
func OpenBackend(spec string, size int64, opts BackendOptions) (Backend, error) {
	if err := CheckBackendSpec(spec); err != nil {
		return nil, err
	}
	name, arg, _ := strings.Cut(spec, ":")
	if name == "file" {
		if err := CheckImage(arg); err != nil {
			return nil, err
		}
		f, err := OpenFile(arg, size, opts.ReadOnly)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	if err := backendCheckSize(name, size); err != nil {
		return nil, err
	}
	switch name {
	case "null":
		n := NewNull(size, opts.Fill)
		n.readOnly = opts.ReadOnly
		return n, nil
	case "pattern":
		return NewPattern(size), nil
	default: // memory
		m := NewMemory(size)
		m.readOnly = opts.ReadOnly
		return m, nil
	}
}

// CheckBackendSpec checks that spec names a backend: null, pattern, memory
// or file:PATH with a path.
func CheckBackendSpec(spec string) error {
	name, arg, hasArg := strings.Cut(spec, ":")
	switch {
	case name == "file" && hasArg && arg == "":
		return errors.New("backend \"file:\" needs a path: file:PATH")
	case name == "file" && !hasArg:
		return errors.New("backend \"file\" needs a path: file:PATH")
	case name == "file":
		return nil
	case hasArg || (name != "null" && name != "pattern" && name != "memory"):
		return fmt.Errorf("unknown backend %q: want null, pattern, memory or file:PATH", spec)
	}
	return nil
}

// ErrNoImage: a file: backend's image does not exist.
var ErrNoImage = errors.New("no such image")

// CheckImage refuses an image path that does not exist, saying how to
// create one. nbdscope never creates a user's image: a mistyped path
// would otherwise become a new sparse file that reads as zeroes, and the
// figures would be of the wrong disk.
func CheckImage(path string) error {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		q := shellword.Quote(path)
		return fmt.Errorf("file backend %s: %w; nbdscope never creates an image: create it with `truncate -s 1G %s` or `qemu-img create -f raw %s 1G`",
			path, ErrNoImage, q, q)
	}
	return nil // any other problem (a directory, permissions) is OpenFile's to say
}

func backendCheckSize(name string, size int64) error {
	switch {
	case size <= 0:
		return fmt.Errorf("backend %q needs a size > 0 (for example 1g)", name)
	case size%512 != 0:
		return fmt.Errorf("backend %q: size %d is not a multiple of 512 (clients such as qemu round it up and then fail on the tail)", name, size)
	}
	return nil
}

// BackendCoherent reports whether every connection sees one state of b, with
// a FLUSH on any connection covering writes completed on all of them, so the
// server may advertise CAN_MULTI_CONN. True for every backend of this
// package, false for unknown types unless they implement Coherent() bool.
func BackendCoherent(b Backend) bool {
	switch b := b.(type) {
	case *Null, *Pattern, *Memory, *File:
		return true
	case interface{ Coherent() bool }:
		return b.Coherent()
	}
	return false
}

// BackendReadOnly reports whether b rejects writes, so the server should set
// the READ_ONLY transmission flag. It asks b's ReadOnly() bool method; types
// without one are assumed writable.
func BackendReadOnly(b Backend) bool {
	if r, ok := b.(interface{ ReadOnly() bool }); ok {
		return r.ReadOnly()
	}
	return false
}

// bounds are what each backend's requests are checked against: its kind
// (the name its errors give), its size and whether it refuses changes.
// Embedded in every backend, it gives them Size and ReadOnly, and the
// checks each request starts with, so that no two backends can differ on
// what is out of range or which errno says so.
type bounds struct {
	kind     string // "file", "memory", "null", "pattern"
	size     int64
	readOnly bool
}

// Size returns the export size.
func (b *bounds) Size() int64 { return b.size }

// ReadOnly reports whether writes, trims and zeroes are refused.
func (b *bounds) ReadOnly() bool { return b.readOnly }

// checkRange checks that a read, trim, write, zero or block status of n
// bytes at off, [off, off+n), lies within [0, size). Out of range, reads,
// trims and block status wrap EINVAL, writes and zeroes ENOSPC, as the NBD
// spec asks.
func (b *bounds) checkRange(op string, off, n int64) error {
	if off < 0 || n < 0 || off > b.size || n > b.size-off {
		errno := EINVAL
		if op == "write" || op == "zero" {
			errno = ENOSPC
		}
		return fmt.Errorf("%s backend: %s of %d bytes at offset %d is beyond the end of the %d-byte export: %w",
			b.kind, op, n, off, b.size, errno)
	}
	return nil
}

// checkWrite is the check every change to a backend (write, trim, zero)
// starts with: refused on a read-only backend, then checkRange's.
func (b *bounds) checkWrite(op string, off, n int64) error {
	if b.readOnly {
		return errBackendReadOnly(b.kind, op)
	}
	return b.checkRange(op, off, n)
}

// errBackendReadOnly is returned (wrapped) by writes to read-only backends.
func errBackendReadOnly(name, op string) error {
	return fmt.Errorf("%s backend is read-only, %s refused: %w", name, op, EPERM)
}

// backendAppendExtent appends a run to ext, merging it with the last one when
// the flags are equal. Runs of length 0 are dropped.
func backendAppendExtent(ext []Extent, length uint64, flags uint32) []Extent {
	if length == 0 {
		return ext
	}
	if n := len(ext); n > 0 && ext[n-1].Flags == flags {
		ext[n-1].Length += length
		return ext
	}
	return append(ext, Extent{Length: length, Flags: flags})
}
