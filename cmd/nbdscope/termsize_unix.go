//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminalColumns is f's terminal width, 0 when f is not a terminal.
func terminalColumns(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
