package ui

import (
	"regexp"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"nbdscope/platform"
)

// common is what every component shares (the soft-serve way): the
// terminal's size, the styles and the platform facts. Each component also
// keeps the size of its own area, set by the root with SetSize.
type common struct {
	width, height int
	styles        *Styles
	facts         platform.Facts
}

// fit makes s exactly w cells wide: truncated with an ellipsis or padded
// with spaces. It is ANSI aware.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := cellWidth(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-sw)
}

// clip truncates s to at most w cells (no padding).
func clip(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if cellWidth(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

// clipLines truncates every line of s to w cells and keeps at most h lines.
func clipLines(s string, w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = clip(l, w)
	}
	return strings.Join(lines, "\n")
}

// wrap word-wraps plain text to w cells and returns its lines, at most max
// of them (0: all; the last one ends in an ellipsis when text was cut). A
// figure stays with its unit ("2 MiB", "9.80 ms"): the line breaks before
// the number rather than between them; so does a range ("64k … 4m").
func wrap(s string, w, max int) []string {
	if w <= 0 || max < 0 {
		return nil
	}
	s = figureUnit.ReplaceAllString(s, "$1\u00a0$2")
	s = strings.ReplaceAll(s, " … ", "\u00a0…\u00a0") // a range, "64k … 4m", stays on one line
	lines := strings.Split(strings.ReplaceAll(ansi.Wrap(s, w, " "), "\u00a0", " "), "\n")
	if max > 0 && len(lines) > max {
		lines = lines[:max]
		lines[max-1] = ansi.Truncate(lines[max-1]+" …", w, "…")
	}
	for i := range lines {
		lines[i] = clip(strings.TrimRight(lines[i], " "), w)
	}
	return lines
}

// spread puts left and right on one line of w cells, right-aligned; the
// left part is truncated when both do not fit.
func spread(left, right string, w int) string {
	lw, rw := cellWidth(left), cellWidth(right)
	if rw >= w {
		return clip(left, w)
	}
	if lw+1+rw > w {
		left = clip(left, w-rw-1)
		lw = cellWidth(left)
	}
	return left + strings.Repeat(" ", max(1, w-lw-rw)) + right
}

// figureUnit is a number and the unit after it.
var figureUnit = regexp.MustCompile(`(\d) (KiB|MiB|GiB|TiB|bytes|ms|s|cores|calls)\b`)
