//go:build !unix

package main

// ttyColumns: no terminal size outside unix; charts use the default width.
func ttyColumns(fd uintptr) (cols int, isTerm bool) { return 0, false }
