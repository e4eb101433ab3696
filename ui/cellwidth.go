package ui

import (
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// cellWidth is ansi.StringWidth(s), the cells s takes on a terminal, by a
// quick walk where every rune of s is one cell wide for certain: ASCII,
// and the Latin, punctuation, arrow, box-drawing, block and braille runes
// the explorer draws with, between SGR sequences (ESC [ … m). Anything
// else (a wide or combining rune, another escape) goes to
// ansi.StringWidth, whose grapheme segmentation was a tenth of the
// controller's CPU when every line of every frame went through it
// (clip, fit: bench/README, "The controller's own CPU").
func cellWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			j := skipSGR(s, i)
			if j < 0 {
				return ansi.StringWidth(s)
			}
			i = j
			continue
		case c >= 0x20 && c < 0x7f:
			n++
			i++
			continue
		case c < utf8.RuneSelf:
			return ansi.StringWidth(s) // a control byte
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !oneCell(r) {
			return ansi.StringWidth(s)
		}
		n++
		i += size
	}
	return n
}

// skipSGR is the index after the SGR sequence (ESC [ params m) at s[i],
// or -1 where s[i:] starts no such sequence.
func skipSGR(s string, i int) int {
	if i+1 >= len(s) || s[i+1] != '[' {
		return -1
	}
	for j := i + 2; j < len(s); j++ {
		switch c := s[j]; {
		case c == 'm':
			return j + 1
		case c >= '0' && c <= '9' || c == ';' || c == ':':
		default:
			return -1
		}
	}
	return -1
}

// oneCell says r is one cell wide in every terminal and in
// ansi.StringWidth: Latin-1's printable runes but the soft hyphen, general
// punctuation's dashes, quotes, bullets and ellipsis, arrows, mathematical
// operators (≈ ≥ ≤ ×), box drawing, blocks, geometric shapes, braille.
func oneCell(r rune) bool {
	switch {
	case r >= 0xa0 && r <= 0xff:
		return r != 0xad
	case r >= 0x2010 && r <= 0x2027, r >= 0x2190 && r <= 0x21ff:
		return true
	case r >= 0x2200 && r <= 0x22ff:
		return true
	case r >= 0x2500 && r <= 0x25ff, r >= 0x2800 && r <= 0x28ff:
		return true
	}
	return false
}
