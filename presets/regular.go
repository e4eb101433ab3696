package presets

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openRegular opens a store's file for reading only if it is a regular
// file of at most limit bytes. The open is non-blocking, so a FIFO with no
// writer (mkfifo runs/x.json) opens at once instead of hanging every
// command that lists the store, and the file's type and size are checked
// on the open file (fstat) before a byte is read: a FIFO, a device, a
// directory or a symlink to one (ln -s /dev/zero runs/zero.json, which
// would read until the limit) is refused with an error naming it and
// what it is, as is a file over the limit. Both refusals match ErrInvalid
// (a bad input: exit 2 on the command line; a warning beside the others in
// a list). Errors of the open itself are os's own, which name the file.
func openRegular(path string, limit int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, invalidError{fmt.Errorf("%s: %s, not a regular file: not read", path, fileKind(path, fi.Mode()))}
	}
	if fi.Size() > limit {
		f.Close()
		return nil, invalidError{fmt.Errorf("%s: %w than %d bytes (%d): not read", path, errTooLarge, limit, fi.Size())}
	}
	return f, nil
}

// fileKind says what a file that is not regular is, and whether path
// reached it through a symlink ("a symlink to a character device").
func fileKind(path string, m fs.FileMode) string {
	var k string
	switch {
	case m&fs.ModeNamedPipe != 0:
		k = "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		k = "a character device"
	case m&fs.ModeDevice != 0:
		k = "a block device"
	case m&fs.ModeSocket != 0:
		k = "a socket"
	case m.IsDir():
		k = "a directory"
	default:
		k = "a special file (" + m.Type().String() + ")"
	}
	if li, err := os.Lstat(path); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		return "a symlink to " + k
	}
	return k
}
