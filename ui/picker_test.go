package ui

import (
	"testing"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/list"
	tea "github.com/charmbracelet/bubbletea"
)

// plainItem is a picker entry of neither kind: the picker must not care.
type plainItem string

func (i plainItem) Title() string       { return string(i) }
func (i plainItem) Description() string { return "entry " + string(i) }
func (i plainItem) FilterValue() string { return string(i) }

func pickerOf(t *testing.T, kind pickerKind) (*picker, *[]list.Item) {
	t.Helper()
	p := newPicker(&common{styles: DefaultStyles()})
	p.SetSize(80, 20)
	var chosen []list.Item
	p.start(kind, func(it list.Item) tea.Cmd {
		chosen = append(chosen, it)
		return func() tea.Msg { return nil }
	})
	return &p, &chosen
}

func (p *picker) press(t *testing.T, keys ...string) tea.Cmd {
	t.Helper()
	var cmd tea.Cmd
	for _, k := range keys {
		*p, cmd = p.Update(keyMsg(k))
	}
	return cmd
}

// The presets and the saved runs are one picker: the same keys do the
// same in both, the key that opened it closing it too, loading or not.
func TestPickerKindsShareKeys(t *testing.T) {
	for _, kind := range []pickerKind{presetKind, runKind} {
		toggle := kind.toggle.Keys()[0]
		t.Run(kind.one, func(t *testing.T) {
			p, chosen := pickerOf(t, kind)
			if !p.open || !p.loading || p.runs != kind.runs {
				t.Fatalf("start: open %v loading %v runs %v", p.open, p.loading, p.runs)
			}
			p.press(t, "down", "x")
			if !p.open {
				t.Fatal("a key other than Close closed the loading picker")
			}
			p.press(t, toggle)
			if p.open {
				t.Errorf("%s did not close the loading %s picker", toggle, kind.one)
			}

			p, chosen = pickerOf(t, kind)
			p.show([]list.Item{plainItem("one"), plainItem("two"), plainItem("three")}, 0)
			if cmd := p.press(t, "down", "enter"); cmd == nil || p.open {
				t.Fatalf("enter: cmd %v, open %v", cmd != nil, p.open)
			}
			if len(*chosen) != 1 || (*chosen)[0] != plainItem("two") {
				t.Fatalf("enter chose %v, want [two]", *chosen)
			}

			// Typing a filter takes every key, Close's included; an
			// applied filter is cleared by esc before esc closes.
			p, chosen = pickerOf(t, kind)
			p.show([]list.Item{plainItem("one"), plainItem("two"), plainItem("q" + toggle)}, 0)
			p.press(t, "/", "q", toggle)
			if !p.open || p.list.FilterValue() != "q"+toggle {
				t.Fatalf("filter: open %v, value %q", p.open, p.list.FilterValue())
			}
			p.press(t, "enter") // applies the filter
			p.press(t, "esc")
			if !p.open || p.list.IsFiltered() {
				t.Fatalf("esc on a filter: open %v, filtered %v", p.open, p.list.IsFiltered())
			}
			for _, k := range []string{"esc", "q", toggle} {
				p, chosen = pickerOf(t, kind)
				p.show([]list.Item{plainItem("one")}, 0)
				p.press(t, k)
				if p.open || len(*chosen) != 0 {
					t.Errorf("%s: open %v, chose %v", k, p.open, *chosen)
				}
			}
		})
	}
}

// The picker's footer is its own key map, and its keys are bindings.
func TestPickerKeyMap(t *testing.T) {
	for _, kind := range []pickerKind{presetKind, runKind} {
		k := keysFor(kind)
		var helps []string
		for _, b := range k.ShortHelp() {
			helps = append(helps, b.Help().Key)
		}
		if got, want := helps, []string{"enter", "/", "↑/↓", "esc"}; len(got) != len(want) || got[0] != want[0] || got[3] != want[3] {
			t.Errorf("%s footer keys %v, want %v", kind.one, got, want)
		}
		if !key.Matches(keyMsg(kind.toggle.Keys()[0]), k.Close) {
			t.Errorf("%s: its toggle %v is not a Close key", kind.one, kind.toggle.Keys())
		}
	}
}
