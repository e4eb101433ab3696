//go:build !linux

package child

import (
	"io"
	"os"
)

// commandReader is f: the raw reads of cmdinput_linux.go are for the
// runtime's monitor of a pinned Linux load.
func commandReader(f *os.File) io.Reader { return f }
