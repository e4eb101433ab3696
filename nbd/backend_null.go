package nbd

import "sync/atomic"

// nullTemplateSize is the size of the prefilled buffer reads are copied from:
// large enough that a 2 MiB read is 32 memmoves, small enough to stay in L2.
const nullTemplateSize = 64 << 10

// Null is a backend without storage: reads return a fill byte, writes are
// discarded. It measures the data path without any storage cost.
type Null struct {
	bounds
	fill byte
	tmpl []byte // nullTemplateSize bytes of fill; nil when fill is 0

	// view is what View hands out: fill bytes, grown on demand to the
	// largest read seen (at most MaxPayload), never written after it is
	// published, shared by every request and connection.
	view atomic.Pointer[[]byte]
}

// NewNull returns a null backend of size bytes whose reads return fill
// (callers normally pass DefaultNullFill, 0xff, so that no client skips the
// data as zeroes).
func NewNull(size int64, fill byte) *Null {
	n := &Null{bounds: bounds{kind: "null", size: size}, fill: fill}
	if fill != 0 {
		n.tmpl = make([]byte, nullTemplateSize)
		n.tmpl[0] = fill
		for k := 1; k < len(n.tmpl); k *= 2 {
			copy(n.tmpl[k:], n.tmpl[:k])
		}
	}
	return n
}

// Fill returns the byte reads return.
func (n *Null) Fill() byte { return n.fill }

// ReadAt fills p with the fill byte.
func (n *Null) ReadAt(p []byte, off int64) (int, error) {
	if err := n.checkRange("read", off, int64(len(p))); err != nil {
		return 0, err
	}
	if n.tmpl == nil {
		clear(p)
		return len(p), nil
	}
	for q := p; len(q) > 0; {
		q = q[copy(q, n.tmpl):]
	}
	return len(p), nil
}

// View returns length bytes of fill without copying them: a read-only
// slice the server writes to the socket as it is (see Viewer).
func (n *Null) View(off int64, length int) ([]byte, bool) {
	if length < 0 || length > MaxPayload || n.checkRange("read", off, int64(length)) != nil {
		return nil, false
	}
	if v := n.view.Load(); v != nil && len(*v) >= length {
		return (*v)[:length:length], true
	}
	// Grow: at least double, so a run of growing sizes allocates little.
	// Concurrent growers may each build one; the largest wins, and slices
	// handed out earlier stay valid (and unchanged).
	size := max(length, 64<<10)
	if v := n.view.Load(); v != nil {
		size = min(max(size, 2*len(*v)), MaxPayload)
	}
	b := make([]byte, size)
	if n.fill != 0 {
		b[0] = n.fill
		for k := 1; k < len(b); k *= 2 {
			copy(b[k:], b[:k])
		}
	}
	nb := &b // never written again once published
	for {
		old := n.view.Load()
		if old != nil && len(*old) >= size {
			nb = old
			break
		}
		if n.view.CompareAndSwap(old, nb) {
			break
		}
	}
	return (*nb)[:length:length], true
}

// WriteAt discards p.
func (n *Null) WriteAt(p []byte, off int64) (int, error) {
	if err := n.checkWrite("write", off, int64(len(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Sync does nothing.
func (n *Null) Sync() error { return nil }

// Trim does nothing.
func (n *Null) Trim(off, length int64) error {
	return n.checkWrite("trim", off, length)
}

// Zero does nothing (reads keep returning the fill byte: the null backend
// has no state).
func (n *Null) Zero(off, length int64, mayTrim bool) error {
	return n.checkWrite("zero", off, length)
}

// Extents reports the whole range as data.
func (n *Null) Extents(off, length int64) ([]Extent, error) {
	if err := n.checkRange("block status", off, length); err != nil {
		return nil, err
	}
	return backendAppendExtent(nil, uint64(length), 0), nil
}

// Close does nothing.
func (n *Null) Close() error { return nil }

var _ interface {
	mutableBackend
	Viewer
} = (*Null)(nil)
