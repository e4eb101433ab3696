package nbd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
)

// File is a backend on a raw image file (or block device) accessed with
// pread/pwrite, safe for concurrent use.
type File struct {
	bounds
	f    *os.File
	path string

	// Set once the OS said a feature is unsupported, so it is not asked
	// again (see backend_file_linux.go).
	noPunch     atomic.Bool
	noZeroRange atomic.Bool
	noSeekData  atomic.Bool
}

// OpenFile opens the raw image at path.
//
//   - The file exists: size 0 means its own size; any other size must match
//     it, or OpenFile fails rather than truncate user data. Exception: an
//     empty regular file (as made by mktemp) opened writable is extended to
//     size.
//   - The file does not exist: with size > 0 and !readOnly it is created
//     (0644) and truncated to size; otherwise OpenFile fails.
//
// The size must be a multiple of 512. Block devices work too (their size is
// found by seeking to the end).
func OpenFile(path string, size int64, readOnly bool) (*File, error) {
	if size < 0 {
		return nil, fmt.Errorf("file backend %s: negative size %d", path, size)
	}
	if size%512 != 0 {
		return nil, fmt.Errorf("file backend %s: size %d is not a multiple of 512", path, size)
	}
	flag := os.O_RDWR
	if readOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0)
	created := false
	if errors.Is(err, fs.ErrNotExist) {
		switch {
		case readOnly:
			return nil, fmt.Errorf("file backend: %s does not exist (and read-only mode does not create it)", path)
		case size == 0:
			return nil, fmt.Errorf("file backend: %s does not exist; give a size to create it", path)
		}
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		created = true
	}
	if err != nil {
		return nil, fmt.Errorf("file backend: %w", err)
	}
	fail := func(err error) (*File, error) {
		f.Close()
		if created {
			os.Remove(path)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return fail(fmt.Errorf("file backend: %w", err))
	}
	if st.IsDir() {
		return fail(fmt.Errorf("file backend: %s is a directory", path))
	}
	cur, err := f.Seek(0, io.SeekEnd) // also right for block devices
	if err != nil {
		return fail(fmt.Errorf("file backend: finding the size of %s: %w", path, err))
	}
	switch {
	case size == 0:
		if cur == 0 {
			return fail(fmt.Errorf("file backend: %s is empty; give a size", path))
		}
		size = cur
	case cur == size:
	case cur == 0 && st.Mode().IsRegular() && !readOnly:
		if err := f.Truncate(size); err != nil {
			return fail(fmt.Errorf("file backend: sizing %s to %d bytes: %w", path, size, err))
		}
	default:
		return fail(fmt.Errorf("file backend: %s is %d bytes, not the %d bytes asked for (refusing to resize an existing image; omit the size to use the file's)", path, cur, size))
	}
	if size%512 != 0 {
		return fail(fmt.Errorf("file backend: %s is %d bytes, not a multiple of 512 (resize it, e.g. truncate -s %d)", path, size, (size+511)/512*512))
	}
	return &File{bounds: bounds{kind: "file", size: size, readOnly: readOnly}, f: f, path: path}, nil
}

// Path returns the path the file was opened with.
func (b *File) Path() string { return b.path }

// ReadAt reads len(p) bytes at off with pread. A short read (the file
// shrank under us) is an error wrapping EIO and io.ErrUnexpectedEOF.
func (b *File) ReadAt(p []byte, off int64) (int, error) {
	if err := b.checkRange("read", off, int64(len(p))); err != nil {
		return 0, err
	}
	n, err := b.f.ReadAt(p, off)
	if n == len(p) {
		return n, nil // io.EOF at the very end is success
	}
	if err == nil || err == io.EOF {
		err = fmt.Errorf("file backend %s: short read: %d of %d bytes at offset %d (was the file truncated?): %w: %w",
			b.path, n, len(p), off, EIO, io.ErrUnexpectedEOF)
	}
	return n, err
}

// WriteAt writes p at off with pwrite.
func (b *File) WriteAt(p []byte, off int64) (int, error) {
	if err := b.checkWrite("write", off, int64(len(p))); err != nil {
		return 0, err
	}
	return b.f.WriteAt(p, off)
}

// Sync flushes the file to stable storage (fsync; F_FULLFSYNC on darwin).
func (b *File) Sync() error { return b.f.Sync() }

// Trim discards [off, off+length): a punched hole where the OS and file
// system support it, otherwise zeroes are written.
func (b *File) Trim(off, length int64) error {
	if err := b.checkWrite("trim", off, length); err != nil {
		return err
	}
	if length == 0 {
		return nil
	}
	if done, err := b.osTrim(off, length); done || err != nil {
		return err
	}
	return b.writeZeroes(off, length)
}

// Zero zeroes [off, off+length): by punching a hole if mayTrim, otherwise
// with FALLOC_FL_ZERO_RANGE (keeping the blocks allocated), falling back to
// writing zeroes.
func (b *File) Zero(off, length int64, mayTrim bool) error {
	if err := b.checkWrite("zero", off, length); err != nil {
		return err
	}
	if length == 0 {
		return nil
	}
	if done, err := b.osZero(off, length, mayTrim); done || err != nil {
		return err
	}
	return b.writeZeroes(off, length)
}

// Extents reports holes (StateHole|StateZero) found with SEEK_DATA and
// SEEK_HOLE where supported; otherwise the whole range is data.
func (b *File) Extents(off, length int64) ([]Extent, error) {
	if err := b.checkRange("block status", off, length); err != nil {
		return nil, err
	}
	if length == 0 {
		return nil, nil
	}
	if ext, ok := b.osExtents(off, length); ok {
		return ext, nil
	}
	return backendAppendExtent(nil, uint64(length), 0), nil
}

// Close closes the file.
func (b *File) Close() error { return b.f.Close() }

// fileZeroBuf is the source of writeZeroes; never written.
var fileZeroBuf [256 << 10]byte

func (b *File) writeZeroes(off, length int64) error {
	for length > 0 {
		n := min(length, int64(len(fileZeroBuf)))
		if _, err := b.f.WriteAt(fileZeroBuf[:n], off); err != nil {
			return err
		}
		off += n
		length -= n
	}
	return nil
}

var _ mutableBackend = (*File)(nil)
