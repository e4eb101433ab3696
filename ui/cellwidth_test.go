package ui

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// cellWidth agrees with ansi.StringWidth on every line of every golden
// screen the explorer draws, and on generated strings mixing its runes,
// wide and combining ones, controls and escapes of every kind.
func TestCellWidthIsStringWidth(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/*/*.golden")
	if len(files) == 0 {
		t.Fatal("no golden screens found")
	}
	lines := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			lines++
			if got, want := cellWidth(l), ansi.StringWidth(l); got != want {
				t.Fatalf("%s: %q: %d cells, want %d", f, l, got, want)
			}
		}
	}
	parts := []string{"a", " ", "·", "…", "→", "≈", "█", "▓", "░", "┃", "━", "⣿", "é", "—", "×",
		"界", "e\u0301", "\u00ad", "\u200b", "\t", "\x1b[1;38;5;12m", "\x1b[0m", "\x1b]8;;http://x\x1b\\", "\x1b[", "\x1b", "😀", "\u2028"}
	rng := rand.New(rand.NewPCG(36, 1))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for k := rng.IntN(12); k >= 0; k-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		s := b.String()
		if got, want := cellWidth(s), ansi.StringWidth(s); got != want {
			t.Fatalf("%q: %d cells, want %d", s, got, want)
		}
	}
	t.Logf("%d golden lines", lines)
}

func BenchmarkCellWidth(b *testing.B) {
	line := "\x1b[1m┃\x1b[0m server sndbuf default → 208k eff       throughput  3.83 GiB/s                \x1b[2m┃\x1b[0m│ fill ██░░ f12 e6% · kernel"
	b.Run("quick", func(b *testing.B) {
		for b.Loop() {
			cellWidth(line)
		}
	})
	b.Run("ansi", func(b *testing.B) {
		for b.Loop() {
			ansi.StringWidth(line)
		}
	})
}
