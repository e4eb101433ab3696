package cutcheck

import "testing"

func TestCuts(t *testing.T) {
	cut := []string{
		"┏━ ▸ A ○ waiting its turn · consume … ━┓",
		"┃         srv snd 8k · cli snd 208k e… ┃",
		"✗ save preset bad name!: invalid name \"bad name!\": want 1 to 64 letters, digits…",
		"│ net.core.wmem_max is …",
	}
	for _, row := range cut {
		if got := Cuts([]string{row}); len(got) != 1 {
			t.Errorf("%q: cuts %q, want one", row, got)
		}
	}
	fine := []string{
		"┏━ ▸ A ● running · applying… ━━━┓",
		"╭─ B … starting ──────╮",
		"nbdscope  mode alternate  preset linux-gap*    stopping…  0:42",
		"stopping the pair…",
		"applying preset macos-gap…",
		"loading presets…",
		"   consume     what the client does with each read (--consume, --at a.consume=…), which",
		"restarting side B…",
		"no ellipsis at all",
	}
	for _, row := range fine {
		if got := Cuts([]string{row}); got != nil {
			t.Errorf("%q: cuts %q, want none", row, got)
		}
	}
	if got := Cuts([]string{"ok", "x applying… y…"}); len(got) != 1 || got[0] != `row 1: "x applying… y…"` {
		t.Errorf("row and context: %q", got)
	}
}
