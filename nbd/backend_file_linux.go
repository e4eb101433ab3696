//go:build linux

package nbd

import (
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// On Linux TRIM punches holes and WRITE_ZEROES uses fallocate, and holes are
// found with SEEK_DATA/SEEK_HOLE. The file offset those seeks move is not
// used by anything else: all I/O is pread/pwrite.

// fallocate runs fallocate(2) on the file.
func (b *File) fallocate(mode uint32, off, length int64) error {
	rc, err := b.f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Fallocate(int(fd), mode, off, length)
			if ferr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// fallocateUnsupported reports whether err means the file system (or kernel)
// does not do this fallocate mode at all, so it need not be asked again.
func fallocateUnsupported(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ENODEV)
}

// tryFallocate runs one fallocate mode unless it is known to be unsupported.
// It returns done when the range was handled, and an error only for real
// failures (EIO, ENOSPC, …); "unsupported" and EINVAL (e.g. unaligned
// ranges on block devices) mean: fall back.
func (b *File) tryFallocate(no *atomic.Bool, mode uint32, off, length int64) (done bool, err error) {
	if no.Load() {
		return false, nil
	}
	err = b.fallocate(mode, off, length)
	switch {
	case err == nil:
		return true, nil
	case fallocateUnsupported(err):
		no.Store(true)
		return false, nil
	case errors.Is(err, unix.EINVAL):
		return false, nil
	}
	return true, fmt.Errorf("file backend %s: fallocate(mode 0x%x, %d, %d): %w", b.path, mode, off, length, err)
}

func (b *File) osTrim(off, length int64) (bool, error) {
	return b.tryFallocate(&b.noPunch, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, length)
}

func (b *File) osZero(off, length int64, mayTrim bool) (bool, error) {
	if mayTrim {
		if done, err := b.osTrim(off, length); done || err != nil {
			return done, err
		}
	}
	if done, err := b.tryFallocate(&b.noZeroRange, unix.FALLOC_FL_ZERO_RANGE|unix.FALLOC_FL_KEEP_SIZE, off, length); done || err != nil {
		return done, err
	}
	if !mayTrim {
		// No ZERO_RANGE (tmpfs, some network file systems): punch, then
		// allocate the blocks again as NO_HOLE asks (best effort: the
		// data is already right).
		if done, err := b.osTrim(off, length); done || err != nil {
			if err == nil {
				_ = b.fallocate(0, off, length)
			}
			return done, err
		}
	}
	return false, nil
}

func (b *File) osExtents(off, length int64) ([]Extent, bool) {
	if b.noSeekData.Load() {
		return nil, false
	}
	rc, err := b.f.SyscallConn()
	if err != nil {
		return nil, false
	}
	var (
		ext  []Extent
		serr error
	)
	end := off + length
	if err := rc.Control(func(fd uintptr) {
		pos := off
		for pos < end {
			data, err := unix.Seek(int(fd), pos, unix.SEEK_DATA)
			switch {
			case err == unix.ENXIO: // no data after pos
				data = end
			case err != nil:
				serr = err
				return
			}
			if data > pos {
				data = min(data, end)
				ext = backendAppendExtent(ext, uint64(data-pos), StateHole|StateZero)
				pos = data
			}
			if pos >= end {
				return
			}
			hole, err := unix.Seek(int(fd), pos, unix.SEEK_HOLE)
			switch {
			case err == unix.ENXIO:
				hole = end
			case err != nil:
				serr = err
				return
			}
			if hole <= pos { // no progress: be safe, call the rest data
				hole = end
			}
			hole = min(hole, end)
			ext = backendAppendExtent(ext, uint64(hole-pos), 0)
			pos = hole
		}
	}); err != nil {
		return nil, false
	}
	if serr != nil {
		if errors.Is(serr, unix.EINVAL) || errors.Is(serr, unix.EOPNOTSUPP) {
			b.noSeekData.Store(true)
		}
		return nil, false
	}
	return ext, true
}
