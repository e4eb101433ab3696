//go:build unix

package main

import "golang.org/x/sys/unix"

// ttyColumns reads the terminal's width (TIOCGWINSZ); isTerm is false
// when fd is not a terminal.
func ttyColumns(fd uintptr) (cols int, isTerm bool) {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0, false
	}
	return int(ws.Col), true
}
