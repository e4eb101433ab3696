package nbd

import "io"

// Backend is the storage behind an export. ReadAt and WriteAt must be safe
// for concurrent use at different offsets: the server runs requests of many
// connections at once.
type Backend interface {
	io.ReaderAt
	io.WriterAt
	// Size is the export size in bytes (a multiple of 512; see nbd-notes §6.1).
	Size() int64
	// Sync makes every completed write durable (FLUSH, FUA).
	Sync() error
}

// Extent is one run of blocks with the same base:allocation state.
type Extent struct {
	Length uint64
	Flags  uint32 // StateHole | StateZero; 0 = data
}

// Trimmer is implemented by backends that can discard a range.
type Trimmer interface {
	Trim(off, length int64) error
}

// Zeroer is implemented by backends that write zeroes faster than a
// zero-filled buffer. mayTrim is false when the client sent NO_HOLE.
type Zeroer interface {
	Zero(off, length int64, mayTrim bool) error
}

// Extenter is implemented by backends that know which ranges are holes.
// Extents must cover [off, off+length) exactly, in order, with nonzero
// lengths. Backends without it are reported as all data.
type Extenter interface {
	Extents(off, length int64) ([]Extent, error)
}

// Closer is implemented by backends holding resources (files).
type Closer interface {
	Close() error
}

// mutableBackend is a backend with every optional capability a written
// export uses (trim, fast zeroes, extents, close): what the file, memory
// and null backends each assert they are.
type mutableBackend interface {
	Backend
	Trimmer
	Zeroer
	Extenter
	Closer
}
