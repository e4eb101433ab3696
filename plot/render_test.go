package plot

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"nbdscope/internal/testbin"
)

// render draws an SVG document with rsvg-convert (librsvg, as GNOME,
// GitLab and many wikis draw SVG) into a PNG and decodes it. The test is
// skipped without rsvg-convert, and fails under NBDSCOPE_INTEROP=1.
// NBDSCOPE_PLOT_PNG=DIR keeps the PNGs there, to look at.
func render(t *testing.T, name, doc string) image.Image {
	t.Helper()
	testbin.Need(t, "apt-get install librsvg2-bin", "rsvg-convert")
	dir := t.TempDir()
	if keep := os.Getenv("NBDSCOPE_PLOT_PNG"); keep != "" {
		dir = keep
	}
	in, out := filepath.Join(dir, name+".svg"), filepath.Join(dir, name+".png")
	if err := os.WriteFile(in, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("rsvg-convert", "-o", out, in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("rsvg-convert %s: %v: %s", name, err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("rsvg-convert %s did not finish in 60 s", name)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("rsvg-convert's %s.png: %v", name, err)
	}
	return img
}

// svgSize reads the width and height the document declares.
func svgSize(t *testing.T, root node) (int, int) {
	t.Helper()
	w, err1 := strconv.Atoi(root.attr("width"))
	h, err2 := strconv.Atoi(root.attr("height"))
	if err1 != nil || err2 != nil {
		t.Fatalf("svg width %q height %q", root.attr("width"), root.attr("height"))
	}
	return w, h
}

// inked counts the pixels that are not white, and those of colour (hex
// "#RRGGBB", with some tolerance for antialiasing).
func inked(img image.Image, hex string) (ink, colour int) {
	want, _ := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	wr, wg, wb := int(want>>16), int(want>>8&0xff), int(want&0xff)
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if c.R < 250 || c.G < 250 || c.B < 250 {
				ink++
			}
			if abs(int(c.R)-wr) < 40 && abs(int(c.G)-wg) < 40 && abs(int(c.B)-wb) < 40 {
				colour++
			}
		}
	}
	return ink, colour
}

func abs(v int) int { return max(v, -v) }

// Both pictures render with librsvg at the size they declare, with ink on
// them and their colours where they belong, and their text says what they
// show: the run with many changes (numbered markers, the numbered list)
// and the sweep (a bar per size, the fastest in its colour).
func TestSVGsRenderWithRsvg(t *testing.T) {
	cases := []struct {
		name, doc, colour string
		texts             []string
	}{
		{"run-many-changes", SVG("many", manyChanges()), sideColour[0],
			[]string{"nbdscope run many", "change 24 at 4.50s, both sides: mode alternate → concurrent", "time since the start (s)", "throughput (GiB/s)"}},
		{"sweep-exec", SweepSVG("qemu", execSweep()), barBest,
			[]string{"nbdscope sweep qemu: time per server SO_SNDBUF size", "fastest", "wall time of one run of the command (s), lower is better",
				"server SO_SNDBUF as requested", "min–max of the runs"}},
	}
	for _, c := range cases {
		root := parseSVG(t, c.doc)
		text := root.text()
		for _, s := range c.texts {
			if !strings.Contains(text, s) {
				t.Errorf("%s: the text elements lack %q", c.name, s)
			}
		}
		img := render(t, c.name, c.doc)
		w, h := svgSize(t, root)
		if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
			t.Errorf("%s: rendered %dx%d, the document declares %dx%d", c.name, b.Dx(), b.Dy(), w, h)
		}
		ink, colour := inked(img, c.colour)
		area := w * h
		t.Logf("%s: %dx%d, %d pixels inked, %d of %s", c.name, w, h, ink, colour, c.colour)
		if ink < area/50 || ink > area/2 {
			t.Errorf("%s: %d of %d pixels inked, want a drawing (2%%…50%%)", c.name, ink, area)
		}
		if colour < 200 {
			t.Errorf("%s: %d pixels of %s, want its lines or bars drawn", c.name, colour, c.colour)
		}
	}
}
