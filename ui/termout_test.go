package ui

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"nbdscope/model"
)

// lineAt is termOut's writing of a line: cursor to row;1, erase the line.
var lineAt = regexp.MustCompile(`\x1b\[(\d+);1H\x1b\[2K`)

// screenAfter plays termOut's output onto a screen of lines, as a
// terminal would, and returns the screen.
func screenAfter(t *testing.T, out []byte, screen []string) []string {
	t.Helper()
	s := string(out)
	if i := strings.LastIndex(s, seqClear); i >= 0 {
		screen, s = nil, s[i+len(seqClear):]
	}
	locs := lineAt.FindAllStringSubmatchIndex(s, -1)
	for k, loc := range locs {
		row, _ := strconv.Atoi(s[loc[2]:loc[3]])
		end := len(s)
		if k+1 < len(locs) {
			end = locs[k+1][0]
		}
		for len(screen) < row {
			screen = append(screen, "")
		}
		screen[row-1] = s[loc[1]:end]
	}
	return screen
}

func trimScreen(lines []string) string {
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// termOut writes a frame's changed lines only, and what it writes makes
// the screen the frame: after a first frame, a frame with one line
// changed, the same frame again, a shorter one, and one after a new size.
func TestTermOutWritesChangedLines(t *testing.T) {
	var buf bytes.Buffer
	o := &termOut{w: &buf}
	if err := o.start(); err != nil {
		t.Fatal(err)
	}
	var screen []string
	steps := []struct {
		frame     string
		repaint   bool
		wantLines int
	}{
		{"head \x1b[1mbold\x1b[0m\nline 2\nline 3", false, 3},
		{"head \x1b[1mbold\x1b[0m\nline 2 changed\nline 3", false, 1},
		{"head \x1b[1mbold\x1b[0m\nline 2 changed\nline 3", false, 0},
		{"head \x1b[1mbold\x1b[0m\nline 2", false, 1},
		{"head \x1b[1mbold\x1b[0m\nline 2", true, 2},
	}
	for i, st := range steps {
		if st.repaint {
			o.repaint()
		}
		buf.Reset()
		n, err := o.frame(st.frame)
		if err != nil {
			t.Fatal(err)
		}
		if n != st.wantLines {
			t.Errorf("step %d: %d lines written, want %d", i, n, st.wantLines)
		}
		if n == 0 && buf.Len() > 0 {
			t.Errorf("step %d: an unchanged frame wrote %q", i, buf.String())
		}
		screen = screenAfter(t, buf.Bytes(), screen)
		if got := trimScreen(screen); got != st.frame {
			t.Errorf("step %d: the screen shows\n%q\nwant\n%q", i, got, st.frame)
		}
	}
	buf.Reset()
	if err := o.stop(); err != nil || buf.String() != seqCursorOn+seqAltOff {
		t.Errorf("stop wrote %q (%v), want the cursor shown and the alternate screen left", buf.String(), err)
	}
}

// On a terminal the frames are written in the Update that draws them,
// one write each, and a round of samples at the default interval changes
// a few lines of the screen, not all (counted: no renderer's ticker).
func TestFramesWrittenInUpdate(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	var buf bytes.Buffer
	h.m.out = &termOut{w: &buf}
	if err := h.m.out.start(); err != nil {
		t.Fatal(err)
	}
	var screen []string
	for at := 250 * time.Millisecond; at <= 3*time.Second; at += 250 * time.Millisecond {
		h.f.at(at, 0)
		for _, side := range []model.SideID{"A", "B"} {
			f := h.m.frames
			buf.Reset()
			h.m.Update(updateMsg{model.Update{Sample: ptr(sample(side, at.Seconds(), true))}})
			if drew := h.m.frames > f; drew != (buf.Len() > 0) {
				t.Fatalf("at %v side %s: a frame drawn %v, written %d bytes", at, side, drew, buf.Len())
			}
			screen = screenAfter(t, buf.Bytes(), screen)
		}
	}
	if got, want := trimScreen(screen), strings.TrimRight(h.m.View(), "\n"); got != want {
		t.Errorf("the screen is not the last frame:\n%s\nwant\n%s", got, want)
	}
}
