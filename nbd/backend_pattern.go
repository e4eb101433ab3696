package nbd

import "encoding/binary"

// Pattern is a read-only backend compatible with nbdkit's pattern plugin:
// every aligned 8 bytes hold the big-endian offset of their start, so the
// byte at offset o is byte o%8 of the big-endian u64 o&^7. Clients can check
// what they read without a reference copy (PatternCheck).
type Pattern struct {
	bounds
}

// NewPattern returns a pattern backend of size bytes.
func NewPattern(size int64) *Pattern {
	return &Pattern{bounds{kind: "pattern", size: size, readOnly: true}}
}

// ReadAt fills p with the pattern at off.
func (b *Pattern) ReadAt(p []byte, off int64) (int, error) {
	if err := b.checkRange("read", off, int64(len(p))); err != nil {
		return 0, err
	}
	PatternFill(off, p)
	return len(p), nil
}

// WriteAt always fails with EPERM: the pattern backend is read-only.
func (b *Pattern) WriteAt(p []byte, off int64) (int, error) {
	return 0, b.checkWrite("write", off, int64(len(p)))
}

// Sync does nothing.
func (b *Pattern) Sync() error { return nil }

// Extents reports the whole range as data.
func (b *Pattern) Extents(off, length int64) ([]Extent, error) {
	if err := b.checkRange("block status", off, length); err != nil {
		return nil, err
	}
	return backendAppendExtent(nil, uint64(length), 0), nil
}

// Close does nothing.
func (b *Pattern) Close() error { return nil }

// PatternFill fills p with the pattern as read at offset off (off ≥ 0).
func PatternFill(off int64, p []byte) {
	o := uint64(off)
	var w [8]byte
	// Unaligned head.
	if r := o & 7; r != 0 && len(p) > 0 {
		binary.BigEndian.PutUint64(w[:], o&^7)
		n := copy(p, w[r:])
		p = p[n:]
		o += uint64(n)
	}
	// Aligned middle, four words per iteration.
	for len(p) >= 32 {
		binary.BigEndian.PutUint64(p[0:8], o)
		binary.BigEndian.PutUint64(p[8:16], o+8)
		binary.BigEndian.PutUint64(p[16:24], o+16)
		binary.BigEndian.PutUint64(p[24:32], o+24)
		p = p[32:]
		o += 32
	}
	for len(p) >= 8 {
		binary.BigEndian.PutUint64(p, o)
		p = p[8:]
		o += 8
	}
	// Tail.
	if len(p) > 0 {
		binary.BigEndian.PutUint64(w[:], o)
		copy(p, w[:])
	}
}

// PatternCheck verifies that p, read at offset off, holds the pattern. It
// returns ok, or the offset of the first wrong byte.
func PatternCheck(off int64, p []byte) (badOffset int64, ok bool) {
	o := uint64(off)
	var w [8]byte
	checkBytes := func(q []byte, at uint64) (int64, bool) {
		binary.BigEndian.PutUint64(w[:], at&^7)
		r := at & 7
		for i := range q {
			if q[i] != w[r+uint64(i)] {
				return int64(at) + int64(i), false
			}
		}
		return 0, true
	}
	if r := o & 7; r != 0 && len(p) > 0 {
		n := min(len(p), int(8-r))
		if bad, ok := checkBytes(p[:n], o); !ok {
			return bad, false
		}
		p = p[n:]
		o += uint64(n)
	}
	for len(p) >= 32 {
		if binary.BigEndian.Uint64(p[0:8]) != o ||
			binary.BigEndian.Uint64(p[8:16]) != o+8 ||
			binary.BigEndian.Uint64(p[16:24]) != o+16 ||
			binary.BigEndian.Uint64(p[24:32]) != o+24 {
			break // find the exact byte below
		}
		p = p[32:]
		o += 32
	}
	for len(p) >= 8 {
		if binary.BigEndian.Uint64(p) != o {
			bad, _ := checkBytes(p[:8], o)
			return bad, false
		}
		p = p[8:]
		o += 8
	}
	if len(p) > 0 {
		if bad, ok := checkBytes(p, o); !ok {
			return bad, false
		}
	}
	return 0, true
}

var _ interface {
	Backend
	Extenter
	Closer
} = (*Pattern)(nil)
