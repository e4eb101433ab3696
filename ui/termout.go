package ui

import (
	"io"
	"strconv"
	"strings"
)

// termOut writes the explorer's frames to the terminal itself, in the
// Update that drew them, rewriting only the lines that changed.
//
// Why not bubbletea's renderer: it flushes on a ticker of its own (10 a
// second), a wake-up each time, and the runtime's monitor's with it,
// whether or not a frame was drawn; and it measures the width of every
// changed line, grapheme by grapheme, to clip it. The explorer's frames
// are already fitted to the screen (checkFits holds every screen to it),
// and come at most four a second. Measured with bench/ui-cpu.sh: the
// ticker's flushes alone were about a third of the controller's
// wake-ups (bench/README, "The controller's own CPU").
//
// Each changed line is written as: cursor to the line's start, erase the
// whole line, the line. Erasing first needs no width: a line that fills
// the screen to its last column would lose its last cell to an erase
// written after it.
type termOut struct {
	w    io.Writer
	last []string // the lines on the screen; nil: unknown, paint all
	buf  []byte
	on   bool
}

// Sequences (ECMA-48, xterm): the alternate screen, the cursor shown or
// hidden, the whole screen erased, a line erased.
const (
	seqAltOn     = "\x1b[?1049h"
	seqAltOff    = "\x1b[?1049l"
	seqCursorOff = "\x1b[?25l"
	seqCursorOn  = "\x1b[?25h"
	seqClear     = "\x1b[2J"
	seqEraseLine = "\x1b[2K"
)

// start takes over the screen: the alternate screen, cleared, with the
// cursor hidden.
func (o *termOut) start() error {
	o.on, o.last = true, nil
	_, err := io.WriteString(o.w, seqAltOn+seqClear+seqCursorOff)
	return err
}

// stop gives the screen back as it was before start.
func (o *termOut) stop() error {
	if !o.on {
		return nil
	}
	o.on = false
	_, err := io.WriteString(o.w, seqCursorOn+seqAltOff)
	return err
}

// repaint forgets what the screen shows (a new size): the next frame
// clears it and writes every line.
func (o *termOut) repaint() { o.last = nil }

// frame puts a frame on the screen, writing the lines that differ from
// the last frame's in one write; it reports how many lines it wrote.
func (o *termOut) frame(s string) (int, error) {
	if !o.on {
		return 0, nil
	}
	lines := strings.Split(s, "\n")
	b := o.buf[:0]
	if o.last == nil {
		b = append(b, seqClear...)
	}
	n := 0
	for i, l := range lines {
		if o.last != nil && i < len(o.last) && o.last[i] == l {
			continue
		}
		b = appendLine(b, i, l)
		n++
	}
	for i := len(lines); o.last != nil && i < len(o.last); i++ {
		b = appendLine(b, i, "") // a shorter frame leaves no old lines below it
	}
	o.last, o.buf = lines, b
	if len(b) == 0 {
		return 0, nil
	}
	_, err := o.w.Write(b)
	return n, err
}

// appendLine appends the writing of line l at row i (from 0).
func appendLine(b []byte, i int, l string) []byte {
	b = append(b, "\x1b["...)
	b = strconv.AppendInt(b, int64(i+1), 10)
	b = append(b, ";1H"...)
	b = append(b, seqEraseLine...)
	return append(b, l...)
}
