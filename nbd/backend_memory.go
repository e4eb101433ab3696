package nbd

import (
	"bytes"
	"slices"
	"sync"
)

const (
	memChunkShift = 16
	memChunkSize  = 1 << memChunkShift // 64 KiB
	memStripes    = 64                 // data locks, by chunk index
)

type memChunk [memChunkSize]byte

var memZeroChunk memChunk // never written

// Memory is a sparse, writable in-memory backend allocated in 64 KiB chunks.
// Unwritten, trimmed and zeroed whole chunks are holes that read as zero.
//
// Locking: mu guards the chunk table only; the bytes of a chunk are guarded
// by stripes[index%memStripes] (read lock to copy out, write lock to copy
// in or zero). No goroutine holds mu and a stripe at once, so there is no
// lock order to get wrong.
type Memory struct {
	bounds

	mu      sync.RWMutex
	chunks  map[int64]*memChunk
	stripes [memStripes]sync.RWMutex
}

// NewMemory returns an empty (all-hole) memory backend of size bytes.
func NewMemory(size int64) *Memory {
	return &Memory{bounds: bounds{kind: "memory", size: size}, chunks: make(map[int64]*memChunk)}
}

// Allocated returns the bytes held in allocated chunks.
func (m *Memory) Allocated() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return int64(len(m.chunks)) * memChunkSize
}

func (m *Memory) chunk(idx int64) *memChunk {
	m.mu.RLock()
	c := m.chunks[idx]
	m.mu.RUnlock()
	return c
}

func (m *Memory) allocChunk(idx int64) *memChunk {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.chunks[idx]
	if c == nil {
		c = new(memChunk)
		m.chunks[idx] = c
	}
	return c
}

// memForChunks calls fn for every chunk piece of [off, off+n): the chunk index,
// the offset inside the chunk and the offset and length inside the request.
func memForChunks(off, n int64, fn func(idx int64, co, ro, l int64)) {
	for ro := int64(0); ro < n; {
		o := off + ro
		idx := o >> memChunkShift
		co := o & (memChunkSize - 1)
		l := min(n-ro, memChunkSize-co)
		fn(idx, co, ro, l)
		ro += l
	}
}

// ReadAt copies data out; holes read as zero.
func (m *Memory) ReadAt(p []byte, off int64) (int, error) {
	if err := m.checkRange("read", off, int64(len(p))); err != nil {
		return 0, err
	}
	memForChunks(off, int64(len(p)), func(idx, co, ro, l int64) {
		dst := p[ro : ro+l]
		c := m.chunk(idx)
		if c == nil {
			clear(dst)
			return
		}
		s := &m.stripes[idx%memStripes]
		s.RLock()
		copy(dst, c[co:co+l])
		s.RUnlock()
	})
	return len(p), nil
}

// WriteAt copies p in, allocating chunks as needed. Zero data written to a
// hole does not allocate.
func (m *Memory) WriteAt(p []byte, off int64) (int, error) {
	if err := m.checkWrite("write", off, int64(len(p))); err != nil {
		return 0, err
	}
	memForChunks(off, int64(len(p)), func(idx, co, ro, l int64) {
		src := p[ro : ro+l]
		c := m.chunk(idx)
		if c == nil {
			if bytes.Equal(src, memZeroChunk[:l]) {
				return
			}
			c = m.allocChunk(idx)
		}
		s := &m.stripes[idx%memStripes]
		s.Lock()
		copy(c[co:co+l], src)
		s.Unlock()
	})
	return len(p), nil
}

// Sync does nothing.
func (m *Memory) Sync() error { return nil }

// Trim frees the chunks [off, off+length) covers entirely and zeroes the
// partly covered ones.
func (m *Memory) Trim(off, length int64) error {
	if err := m.checkWrite("trim", off, length); err != nil {
		return err
	}
	m.zeroRange(off, length)
	return nil
}

// Zero zeroes [off, off+length): it frees the chunks the range covers
// entirely and zeroes the partly covered ones. mayTrim is ignored, as in
// nbdkit's memory plugin: in RAM a hole is just a zero chunk, and NO_HOLE is
// only a hint about future writes.
func (m *Memory) Zero(off, length int64, mayTrim bool) error {
	if err := m.checkWrite("zero", off, length); err != nil {
		return err
	}
	m.zeroRange(off, length)
	return nil
}

// chunkEnd is the end of chunk idx clipped to the export size: the last
// chunk of an export whose size is not a multiple of 64 KiB is short.
func (m *Memory) chunkEnd(idx int64) int64 {
	return min((idx+1)<<memChunkShift, m.size)
}

func (m *Memory) zeroRange(off, length int64) {
	if length == 0 {
		return
	}
	end := off + length
	first := off >> memChunkShift
	last := (end - 1) >> memChunkShift // inclusive
	// Chunks covered entirely: [fullLo, fullHi].
	fullLo, fullHi := first, last
	if off&(memChunkSize-1) != 0 {
		fullLo++
	}
	if end < m.chunkEnd(last) {
		fullHi--
	}
	// Zero the partly covered head and tail chunks in place.
	zeroPart := func(idx int64) {
		c := m.chunk(idx)
		if c == nil {
			return
		}
		lo := max(off, idx<<memChunkShift) - idx<<memChunkShift
		hi := min(end, m.chunkEnd(idx)) - idx<<memChunkShift
		s := &m.stripes[idx%memStripes]
		s.Lock()
		clear(c[lo:hi])
		s.Unlock()
	}
	if fullLo > first {
		zeroPart(first) // unaligned start (also covers a partial end in the same chunk)
	}
	if fullHi < last && (last != first || fullLo == first) {
		zeroPart(last) // partial end not handled above
	}
	if fullLo > fullHi {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if fullHi-fullLo+1 <= int64(len(m.chunks)) {
		for idx := fullLo; idx <= fullHi; idx++ {
			delete(m.chunks, idx)
		}
		return
	}
	for idx := range m.chunks {
		if idx >= fullLo && idx <= fullHi {
			delete(m.chunks, idx)
		}
	}
}

// Extents reports unallocated chunks as holes (StateHole|StateZero) and
// allocated ones as data, merging adjacent runs of the same state.
func (m *Memory) Extents(off, length int64) ([]Extent, error) {
	if err := m.checkRange("block status", off, length); err != nil {
		return nil, err
	}
	if length == 0 {
		return nil, nil
	}
	end := off + length
	first := off >> memChunkShift
	last := (end - 1) >> memChunkShift

	// The allocated chunk indices in [first, last], sorted.
	var alloc []int64
	m.mu.RLock()
	if last-first+1 <= 2*int64(len(m.chunks))+64 {
		for idx := first; idx <= last; idx++ {
			if m.chunks[idx] != nil {
				alloc = append(alloc, idx)
			}
		}
	} else {
		for idx := range m.chunks {
			if idx >= first && idx <= last {
				alloc = append(alloc, idx)
			}
		}
		slices.Sort(alloc)
	}
	m.mu.RUnlock()

	var ext []Extent
	pos := off
	for _, idx := range alloc {
		start := max(idx<<memChunkShift, off)
		stop := min(m.chunkEnd(idx), end)
		ext = backendAppendExtent(ext, uint64(start-pos), StateHole|StateZero)
		ext = backendAppendExtent(ext, uint64(stop-start), 0)
		pos = stop
	}
	ext = backendAppendExtent(ext, uint64(end-pos), StateHole|StateZero)
	return ext, nil
}

// Close frees all chunks.
func (m *Memory) Close() error {
	m.mu.Lock()
	clear(m.chunks)
	m.mu.Unlock()
	return nil
}

var _ mutableBackend = (*Memory)(nil)
