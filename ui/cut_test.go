package ui

import (
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/teatest"

	"nbdscope/internal/cutcheck"
	"nbdscope/model"
	"nbdscope/presets"
)

// TestNoWordCut draws the explorer's screens at 80x24 and 160x48 in the
// states a user meets and scans them for words and figures the layout
// cut short (issue 21, item 11): every form must fit, on more lines or in
// fewer words, never cut mid-word.
func TestNoWordCut(t *testing.T) {
	cutcheck.AtEachSize(t, func(t *testing.T, w, hgt int) {
		for _, st := range cutStates() {
			t.Run(st.name, func(t *testing.T) {
				h := newHarness(t, st.opts, w, hgt)
				screens := st.do(h)
				golden := screens == nil
				if golden {
					screens = []string{h.view()}
				}
				for _, v := range screens {
					checkFits(t, v, w, hgt)
					if cuts := cutcheck.Cuts(strings.Split(v, "\n")); cuts != nil {
						t.Errorf("cut short:\n  %s\nscreen:\n%s", strings.Join(cuts, "\n  "), v)
					}
				}
				// The forms a state takes at this size, held in
				// testdata/TestNoWordCut (regenerate with -update).
				if golden {
					teatest.RequireEqualOutput(t, []byte(screens[0]))
				}
			})
		}
	})
}

type cutState struct {
	name string
	opts Options
	// do brings the explorer into the state; it returns the screens to
	// scan, nil for the one it ends on (then also held in a golden file).
	do func(h *harness) []string
}

// builtinItems are the built-in presets the picker lists, with their own
// descriptions.
func builtinItems() []PresetItem {
	var out []PresetItem
	for _, p := range presets.Builtins() {
		if !p.SweepsClient() {
			out = append(out, PresetItem{Name: p.Name, Description: p.Description, BuiltIn: true, Config: p.Config})
		}
	}
	return out
}

// execSample is a sample of a side whose load is the real client cmd:
// its own socket calls and latency are not ours to count, and its figures
// are stamped with its command, as the engine's are.
func execSample(side model.SideID, t float64, cmd string) model.Sample {
	s := sample(side, t, true)
	s.Settings.Exec = cmd
	u := model.Unknown
	s.Client.RecvCallsPer2MiB, s.Client.SendCallsPer2MiB, s.Client.RecvEAGAINPer2MiB, s.Client.SendEAGAINPer2MiB = u, u, u, u
	s.LatencyP50Ms, s.LatencyP99Ms = u, u
	s.Errors = nil // a real client's requests are not seen
	// The client's own sockets, read from outside: its own values.
	s.SndBuf.ClientOwn, s.SndBuf.ClientRcvOwn = s.SndBuf.ClientEffective, s.SndBuf.ClientRcvEffective
	return withRecent(s)
}

const qemuRead = `qemu-img convert -f raw -O raw -W -n {uri} 'json:{"file":{"driver":"null-co","size":{size}}}'`

func cutStates() []cutState {
	clamp := model.Update{Warning: &model.Warning{T: 5, Side: "B", Kind: model.WarnClamp,
		Text: "B sndbuf: requested 2m should give 4m effective, the kernel gave 416k: clamped by net.core.wmem_max",
		Fix:  "sudo sysctl -w net.core.wmem_max=2097152  (persist: net.core.wmem_max = 2097152 in /etc/sysctl.d/90-nbdscope.conf)"}}
	execA := func(h *harness) []string {
		h.press("e")
		h.submit(qemuRead)
		for i := 1; i <= 40; i++ {
			tt := float64(i) * 0.25
			h.m.Update(updateMsg{model.Update{Sample: ptr(execSample("A", tt, qemuRead))}})
			h.m.Update(updateMsg{model.Update{Sample: ptr(sample("B", tt, true))}})
		}
		h.send(model.Update{Event: &model.Event{T: 9, Side: "A", Setting: "exec", From: "", To: qemuRead}})
		return nil
	}
	badName := func(string, model.Config, string) error {
		return errors.New(`invalid name "bad name!": want 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit`)
	}
	return []cutState{
		{"default", Options{}, func(h *harness) []string { h.feed(120, 30); return nil }},
		{"waiting-applying", Options{}, func(h *harness) []string {
			h.feed(40, 10)
			h.m.Update(updateMsg{model.Update{Sample: ptr(sample("A", 10.25, false))}})
			h.press("+")
			return nil
		}},
		{"clamp-warning", Options{}, func(h *harness) []string {
			h.feed(120, 30)
			h.send(clamp)
			h.send(model.Update{Event: &model.Event{T: 20, Side: "A", Setting: "sndbuf", From: "default", To: "64k"}})
			h.send(model.Update{Event: &model.Event{T: 25, Side: "B", Setting: "request-size", From: "2m", To: "256k"}})
			return nil
		}},
		{"fill-chart", Options{}, fillChartState},
		{"k-client-rcvbuf", Options{}, func(h *harness) []string { h.feed(40, 10); h.press("k", "k", "k"); return nil }},
		{"exec-side", Options{}, execA},
		{"exec-prompt", Options{}, func(h *harness) []string { h.press("e"); return nil }},
		{"exec-prompt-long", Options{}, func(h *harness) []string { h.press("e"); h.typeText(qemuRead); return nil }},
		{"save-name-error", Options{SavePreset: badName}, func(h *harness) []string {
			h.feed(40, 10)
			h.press("s")
			h.submit("bad name!")
			return nil
		}},
		{"presets-picker", Options{LoadPresets: func() ([]PresetItem, error) { return builtinItems(), nil }}, func(h *harness) []string {
			h.press("p")
			h.m.Update(presetsMsg{items: builtinItems()})
			return nil
		}},
		{"nbdcopy-preset", Options{}, func(h *harness) []string {
			p, _ := presets.Builtin("nbdcopy")
			h.f.cfg = p.Config
			h.m.base.Cfg = p.Config
			h.m.recompute()
			h.feed(40, 10)
			return nil
		}},
		{"write-mixed", Options{}, func(h *harness) []string {
			h.press("w", "2", "w", "w", "w", "w")
			h.settle()
			h.feed(40, 10)
			return nil
		}},
		{"crashed-side", Options{}, func(h *harness) []string {
			h.feed(40, 10)
			h.send(model.Update{Crash: &model.Crash{T: 10, Side: "A", Role: "load", Status: "exit status 1",
				Stderr: []string{"qemu-img: output file is smaller than input file"}}})
			return nil
		}},
		{"ladder-end", Options{}, func(h *harness) []string {
			h.m.com.facts.SndbufLimit = xnuRefusing
			h.press("2", "+", "+")
			h.settle()
			return nil
		}},
		{"help-pages", Options{SavePreset: func(string, model.Config, string) error { return nil },
			RunPath: func(n string) string { return "/home/someone/.local/share/nbdscope/runs/" + n + ".json" }}, func(h *harness) []string {
			h.press("?")
			var all []string
			for range 20 {
				all = append(all, h.view())
				h.press("pgdown")
			}
			return all
		}},
	}
}
