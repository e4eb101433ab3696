package ui

import (
	"strings"
	"testing"

	"nbdscope/model"
)

// A warning raised with its kind and parameters, as the engine raises
// them, is shown in the phrasebook's words: the side's in its panel in
// the short form with its fix, the pair's on the status line in the short
// form, which names the key; before, the explorer printed the engine's
// Text, which a typed warning does not have (an empty ▲).
func TestTypedWarningsInThePhrasebooksWords(t *testing.T) {
	h := newHarness(t, Options{}, 160, 48)
	clamp := model.Warn("B", model.Clamped{Setting: "sndbuf", Requested: 2 << 20, Expected: 4 << 20, Got: 416 << 10,
		Limit: "net.core.wmem_max", Command: "sudo sysctl -w net.core.wmem_max=2097152", Persist: "net.core.wmem_max = 2097152", Where: "/etc/sysctl.d/90-nbdscope.conf"})
	clamp.T = 2
	h.send(model.Update{Warning: &clamp})
	h.wantView("▲ sndbuf clamped: 416k of 4m (net.core.wmem_max)", "fix: sudo sysctl -w net.core.wmem_max=2097152")
	right := strings.Join(columnOf(h.view(), 80, 160), "\n")
	if !strings.Contains(right, "sndbuf clamped") {
		t.Errorf("the clamp warning is not in B's panel:\n%s", right)
	}
	shared := model.Warn(model.WholePair, model.TargetShared{})
	h.send(model.Update{Warning: &shared})
	h.wantView("▲ one process serves both targets: server figures n/a in concurrent mode — m for alternate")
}
