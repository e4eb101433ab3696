package phrase

import (
	"strings"
	"testing"
	"unicode/utf8"

	"nbdscope/model"
	"nbdscope/stats"
)

// doctor's last line follows the verdict of the pair it measured: it
// promises the effect only where the pair showed it, never "the full
// effect" on limits alone (it did so over 28.6 against 22.3 calls), and
// says why where the machine shows little.
func TestGapKeepsToTheVerdict(t *testing.T) {
	d := func(k stats.Kind, r float64) model.Difference {
		return model.Difference{Verdict: stats.Verdict{Kind: k, Ratio: r}}
	}
	little := model.GapVerdict{Kind: model.GapLittle, Calls: d(stats.Beyond, 0.78), Speed: d(stats.Within, 1.02)}
	for _, c := range []struct {
		name   string
		v      model.GapVerdict
		ok     bool
		want   []string
		unsaid []string
	}{
		{"shown", model.GapVerdict{Kind: model.GapShown, Calls: d(stats.Beyond, 0.1), Speed: d(stats.Beyond, 2.2)}, true,
			[]string{"shows the effect", "0.10x", "2.20x"}, []string{"little"}},
		{"shown, a limit hides the rest", model.GapVerdict{Kind: model.GapShown}, false, []string{"shows part of the effect", "✗ lines"}, []string{"try 'nbdscope'"}},
		{"little, quiet", little, true, []string{"shows little", "0.78x", "hardly fell"}, []string{"shows the effect", "full effect"}},
		{"little, busy", model.GapVerdict{Kind: model.GapLittle, Noisy: true}, true, []string{"showed little", "quiet machine"}, []string{"already bridges"}},
		{"calls only, client full", model.GapVerdict{Kind: model.GapCallsOnly, ClientFullA: true, ClientBusyA: 0.97}, true,
			[]string{"calls fall but not the time", "0.97 cores busy", "its own work"}, []string{"shows the effect"}},
		{"unjudged", model.GapVerdict{Kind: model.GapUnjudged}, true, []string{"not judged"}, []string{"shows"}},
		{"calls only, contended", model.GapVerdict{Kind: model.GapCallsOnly, ContendedA: "server", WaitingA: 0.31, ClientFullA: true}, true,
			[]string{"contended", "A's server waited 31% of the time for a core"}, []string{"its own work"}},
	} {
		got := Gap(c.v, c.ok)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
		for _, w := range c.unsaid {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q says %q", c.name, got, w)
			}
		}
	}
}

// The emulation's mark names what ran on which kernel and the series'
// figure from a real Mac, so that nobody quotes this B/A as macOS's.
func TestMacOSEmulationWords(t *testing.T) {
	e := model.MacOSEmulation{Sides: []model.SideID{"A"}, Kernel: "Linux 6.18.0", SeriesSpeedup: 12.6, SeriesSource: "[PATCH v3 1/2] io: …"}
	got := MacOSEmulation(e)
	for _, want := range []string{"macOS's 8 KiB send buffer (side A)", "Linux 6.18.0 kernel, not on XNU", "12.6x", "[PATCH v3 1/2]"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

// The mark's short forms, for the explorer's header, each keep the side,
// this kernel's name and the series' 12.6x, longest first, the shortest
// within the explorer's narrowest screen (40 columns).
func TestMacOSEmulationForms(t *testing.T) {
	e := model.MacOSEmulation{Sides: []model.SideID{"A"}, Kernel: "Linux 6.18.0-1-amd64", SeriesSpeedup: 12.6}
	forms := MacOSEmulationForms(e)
	if len(forms) < 2 {
		t.Fatalf("forms %q", forms)
	}
	for i, f := range forms {
		for _, want := range []string{"A", "macOS", "Linux", "12.6x"} {
			if !strings.Contains(f, want) {
				t.Errorf("form %d %q lacks %q", i, f, want)
			}
		}
		if i > 0 && utf8.RuneCountInString(f) >= utf8.RuneCountInString(forms[i-1]) {
			t.Errorf("form %d %q is no shorter than the one before", i, f)
		}
	}
	if !strings.Contains(forms[0], "not XNU") {
		t.Errorf("the long form %q does not say it is not XNU", forms[0])
	}
	if n := utf8.RuneCountInString(forms[len(forms)-1]); n > 40 {
		t.Errorf("the shortest form takes %d columns: %q", n, forms[len(forms)-1])
	}
}

// The mark of writes names qemu-img writing and its 9.2x in every form.
func TestMacOSEmulationWordsWrites(t *testing.T) {
	e := model.MacOSEmulation{Sides: []model.SideID{"A"}, Kernel: "Linux 6.18.0", SeriesSpeedup: 9.2, SeriesCase: "qemu-img write", SeriesSource: "[PATCH v3 1/2]"}
	if got := MacOSEmulation(e); !strings.Contains(got, "9.2x for qemu-img writing") {
		t.Errorf("%q", got)
	}
	if got := MacOSEmulationForms(e)[0]; !strings.Contains(got, "qemu-img writing") {
		t.Errorf("%q", got)
	}
}
