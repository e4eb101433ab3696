package report

import (
	"bytes"
	"strings"
	"testing"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/seed"
)

// An exec sweep of a case the series measured prints the series' rows
// beside ours (time, user, system, the ratio to the default, on Linux and
// macOS), dashes where the series has no such size, and the two optima
// side by side; a sweep of another command prints neither.
func TestSeedRowsBesideOurs(t *testing.T) {
	row := func(buf string, secs float64) model.SweepRow {
		r := model.SweepRow{Buffer: buf, Seconds: secs, Exec: &model.ExecRow{}}
		r.Figures.Server = &model.Process{}
		return r
	}
	rep := model.SweepReport{
		Spec:    model.SweepSpec{Bytes: 1 << 30, Exec: &model.ExecSpec{Command: "qemu-img convert {uri} null", Seed: seed.QemuImgRead}},
		Rows:    []model.SweepRow{row("default", 2.618), row("64k", 3.0), row("2m", 1.206)},
		Optimum: &model.SweepOptimum{Buffer: "2m", VsDefault: 2.17},
	}
	var b bytes.Buffer
	SweepText(&b, rep, 100)
	out := b.String()
	for _, want := range []string{
		seed.Series,
		"| default | 2.618s | 1.00x | 4.292s | 0.243s | 1.604s | 1.00x | 13.361s | 2.653s | 5.702s | 1.00x |",
		// Linux's table has no 64k row; macOS's has.
		"| 64k | 3.000s | 0.87x | — | — | — | — | 2.283s | 0.204s | 1.318s | 5.85x |",
		"| 2m | 1.206s | 2.17x | 1.884s | 0.060s | 1.191s | 2.28x | 1.060s | 0.080s | 0.602s | 12.60x |",
		// Ours is the sweep's verdict as runs list words it, never a
		// fastest size the verdict did not name.
		"beside the series' fastest: ours " + phrase.OptimumShort(rep.Optimum) +
			"; the series (one time per size, times faster than its default) Linux 2.28x at 4m, macOS 12.60x at 2m.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep text lacks %q:\n%s", want, out)
		}
	}
	rep.Spec.Exec.Seed = ""
	b.Reset()
	SweepText(&b, rep, 100)
	if strings.Contains(b.String(), "series") {
		t.Errorf("a command the series did not measure gets its rows:\n%s", b.String())
	}
}

// A run at macOS's buffer on another kernel says so in the summary, on
// its first line, above the table whose first row is the B/A (it was
// after the table, 48 lines below it), and in the markdown's head.
func TestMacOSEmulationPrinted(t *testing.T) {
	rep := model.Report{Config: model.DefaultConfig(), MacOS: &model.MacOSEmulation{Sides: []model.SideID{"A"}, Kernel: "linux 6.18.0", SeriesSpeedup: 12.6, SeriesSource: "[PATCH v3 1/2]"}}
	rep.Sides = []model.SideReport{{Name: "A"}, {Name: "B"}}
	var b bytes.Buffer
	Summary(&b, rep)
	first, _, _ := strings.Cut(b.String(), "\n")
	if !strings.Contains(first, "not on XNU") || !strings.Contains(first, "12.6x") {
		t.Errorf("the summary's first line: %q", first)
	}
	if strings.Count(b.String(), "not on XNU") != 1 {
		t.Errorf("the summary says it %d times:\n%s", strings.Count(b.String(), "not on XNU"), b.String())
	}
	b.Reset()
	if err := RunMarkdown(&b, "gap", rep); err != nil || !strings.Contains(b.String(), "not on XNU") {
		t.Errorf("markdown: %v\n%s", err, b.String())
	}
}
