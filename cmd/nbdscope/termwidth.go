package main

import (
	"io"
	"os"
	"strconv"
)

// defaultWidth is the width of text charts written to a pipe or a file.
const defaultWidth = 80

// terminalWidth is the number of columns of the terminal w writes to, or
// defaultWidth when w is not a terminal (a pipe, a file, a test buffer),
// so that output saved or piped does not depend on the window it ran in.
// $COLUMNS is a fallback for a terminal whose size cannot be read.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return defaultWidth
	}
	n, isTerm := ttyColumns(f.Fd())
	if !isTerm {
		return defaultWidth
	}
	if n > 0 {
		return n
	}
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		return c
	}
	return defaultWidth
}
