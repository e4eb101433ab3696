package ansisvg

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"nbdscope/internal/testbin"
)

func TestSGRColoursAndReset(t *testing.T) {
	grid := parse("\x1b[1m\x1b[38;5;147mnb\x1b[0m x\x1b[48;2;1;2;3my", 5, 2)
	if c := grid[0][0]; c.r != 'n' || c.s.attrs&attrBold == 0 || c.s.fg != xterm256(147) {
		t.Fatalf("cell 0 = %+v, want bold 'n' in colour 147 (%s)", c, xterm256(147))
	}
	if c := grid[0][3]; c.r != 'x' || c.s != (style{}) {
		t.Fatalf("cell 3 = %+v, want a plain 'x' after the reset", c)
	}
	if c := grid[0][4]; c.r != 'y' || c.s.bg != "#010203" {
		t.Fatalf("cell 4 = %+v, want 'y' on #010203", c)
	}
	if c := grid[1][0]; c.r != ' ' {
		t.Fatalf("row 1 = %+v, want blank", c)
	}
}

// Each SGR code of the 16 colours and the attributes, set and cleared,
// as lipgloss writes them: the state after the codes.
func TestSGRCodes(t *testing.T) {
	for _, c := range []struct {
		params string
		want   style
	}{
		{"31", style{fg: palette16[1]}},
		{"97", style{fg: palette16[15]}},
		{"31;39", style{}},
		{"44", style{bg: palette16[4]}},
		{"101", style{bg: palette16[9]}},
		{"44;49", style{}},
		{"1;2;3;4;7", style{attrs: attrBold | attrFaint | attrItalic | attrUnderline | attrReverse}},
		{"1;2;3;4;7;22", style{attrs: attrItalic | attrUnderline | attrReverse}},
		{"3;4;7;23;24;27", style{}},
		{"5;8;53", style{}}, // blink, conceal, overline: not drawn
		{"1;32;;33", style{fg: palette16[3]}},
	} {
		var got style
		applySGR(c.params, &got)
		if got != c.want {
			t.Errorf("ESC[%sm: %+v, want %+v", c.params, got, c.want)
		}
	}
}

func TestXterm256(t *testing.T) {
	for n, want := range map[int]string{1: "#cd0000", 16: "#000000", 21: "#0000ff", 231: "#ffffff", 232: "#080808", 255: "#eeeeee"} {
		if got := xterm256(n); got != want {
			t.Errorf("xterm256(%d) = %s, want %s", n, got, want)
		}
	}
}

// Each character sits at its own column, so a wide glyph cannot shift the
// box drawing after it; text is escaped; other escapes are dropped.
func TestRenderPlacesEveryCell(t *testing.T) {
	svg := Render("a<b\x1b[2Jc", 4, 1)
	if !strings.Contains(svg, ">a&lt;bc</text>") {
		t.Fatalf("text not escaped or escape not dropped:\n%s", svg)
	}
	if !strings.Contains(svg, `x="12.0 20.4 28.9 37.3"`) {
		t.Fatalf("want one x per cell:\n%s", svg)
	}
}

// The document is one rsvg-convert accepts (the screenshot script's path).
func TestRenderIsValidSVG(t *testing.T) {
	conv := testbin.Tool(t, "Debian: librsvg2-bin", "rsvg-convert")
	dir := t.TempDir()
	in := filepath.Join(dir, "s.svg")
	if err := os.WriteFile(in, []byte(Render("\x1b[7m rev \x1b[0m┏━┓", 20, 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "s.png")
	if b, err := exec.Command(conv, "-o", out, in).CombinedOutput(); err != nil {
		t.Fatalf("rsvg-convert: %v\n%s", err, b)
	}
	if st, err := os.Stat(out); err != nil || st.Size() < 100 {
		t.Fatalf("png: %v %v", st, err)
	}
}
