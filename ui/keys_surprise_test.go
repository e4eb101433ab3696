package ui

import (
	"errors"
	"github.com/charmbracelet/x/ansi"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nbdscope/model"
)

// The case convention of the stepping pairs is on screen: in the footer
// at 80 and at 160 columns, and in the help (issue 21, item 10).
func TestCaseConventionShown(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, Options{}, sz[0], sz[1])
		foot := lastLine(strings.Split(h.view(), "\n"))
		if !strings.Contains(foot, "−/+") || !strings.Contains(foot, "c/C") {
			t.Errorf("%dx%d: the footer does not say c lowers and C raises: %q", sz[0], sz[1], foot)
		}
		h.press("?")
		h.wantView("lowercase c r d lower, capital C R D raise")
	}
}

// The footer names what + - = act on now: k's pick, a write side's
// client buffer; loading a preset starts over on the sender's buffer.
func TestFooterNamesBufferTarget(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	foot := func() string { return lastLine(strings.Split(h.view(), "\n")) }
	if !strings.HasPrefix(foot(), "+/-/= sndbuf •") {
		t.Errorf("footer at the start: %q", foot())
	}
	h.press("k", "k", "k") // server's, client's send, client's receive
	if !strings.HasPrefix(foot(), "+/-/= cli rcvbuf •") {
		t.Errorf("after k k k the footer says %q, want +/-/= cli rcvbuf", foot())
	}
	// The panel's first line names it at once too.
	h.wantView("client rcvbuf default → ")
	h.press("?")
	h.wantView("+ - = act on A's cli rcvbuf")
	h.press("esc")

	h = newHarness(t, Options{LoadPresets: func() ([]PresetItem, error) { return testPresets(), nil }}, 80, 24)
	h.press("k", "k", "k", "p")
	h.m.Update(presetsMsg{items: testPresets()})
	h.press("enter")
	h.settle()
	if h.m.bufTarget != [2]bufTarget{} {
		t.Errorf("k's pick survived a preset: %v", h.m.bufTarget)
	}
	if !strings.HasPrefix(foot(), "+/-/= sndbuf •") {
		t.Errorf("after a preset the footer says %q, want +/-/= sndbuf", foot())
	}
	h.wantView("+/- = act on A's sndbuf")

	// A write side's buffer keys act on the client's send buffer.
	h = newHarness(t, Options{}, 160, 48)
	h.press("w")
	h.settle()
	if !strings.HasPrefix(foot(), "+/-/= cli sndbuf •") {
		t.Errorf("write side: footer %q, want +/-/= cli sndbuf", foot())
	}
}

// s also writes the run: the help, the prompt and the message after it
// say so, with the file's path and size.
func TestSaveSaysRunFile(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name+".json") }
	h := newHarness(t, Options{
		SavePreset: func(name string, _ model.Config, _ string) error {
			return writeFileT(path(name), 2000)
		},
		RunPath: path,
	}, 160, 48)
	if foot := lastLine(strings.Split(h.view(), "\n")); !strings.Contains(foot, "s save preset+run") {
		t.Errorf("footer at 160 columns: %q", foot)
	}
	h.press("?")
	h.wantView("s saves a preset and the run so far (every sample, about 1 MB a minute) as", filepath.Join(dir, "NAME.json"))
	h.press("esc", "s")
	h.wantView("save preset + run as:")
	h.submit("mine")
	h.wantView("saved preset mine and the run to " + path("mine") + " (1.95 KiB)")
}

// A rejected value is cleared from the = prompt, so that the next keys
// type a new value, not an addition to the old; the reason stays in view.
func TestRejectedPromptTextCleared(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.press("=")
	h.typeText("3x")
	h.press("enter")
	if h.m.state != stInput || h.m.input.Value() != "" {
		t.Fatalf("after a bad size: state %v, text %q; want the prompt open and empty", h.m.state, h.m.input.Value())
	}
	h.wantView("✗ sndbuf")
	h.typeText("6")
	h.wantView("✗ sndbuf") // still there while the next value is typed
	h.submit("4k")
	h.wantApplied(ch(0, "sndbuf", "64k"))

	// Refused by the engine after it was parsed: cleared too.
	h = newHarness(t, Options{}, 80, 24)
	h.f.applyErr = errors.New("the side refuses it")
	h.press("=")
	h.submit("64k")
	if h.m.state != stInput || h.m.input.Value() != "" {
		t.Errorf("after a refused size: state %v, text %q; want the prompt open and empty", h.m.state, h.m.input.Value())
	}
	h.wantView("the side refuses it")

	// The exec prompt and the save prompt alike.
	h = newHarness(t, Options{SavePreset: func(string, model.Config, string) error {
		return errors.New(`invalid name "a b": want letters`)
	}}, 80, 24)
	h.press("e")
	h.typeText(`qemu-img "unclosed`)
	h.press("enter")
	if h.m.input.Value() != "" {
		t.Errorf("exec prompt kept a rejected command: %q", h.m.input.Value())
	}
	h.press("esc", "s")
	h.submit("a b")
	if h.m.state != stInput || h.m.input.Value() != "" {
		t.Errorf("after a refused name: state %v, text %q; want the prompt open and empty", h.m.state, h.m.input.Value())
	}
	h.wantView("want letters")
}

// writeFileT writes n bytes to path.
func writeFileT(path string, n int) error {
	return os.WriteFile(path, make([]byte, n), 0o600)
}

// After e, the side's panel shows the real client's command, not our
// load's settings ("1 conn · 8×2m · read", "consume scan"), and the
// client's buffers (set on its own sockets from outside) with its own
// values; - goes back to our load.
func TestExecSidePanelShowsCommand(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, Options{}, sz[0], sz[1])
		h.press("e")
		h.submit("nbdcopy {uri} null:")
		h.m.Update(updateMsg{model.Update{Sample: ptr(execSample("A", 1, "nbdcopy {uri} null:"))}})
		h.m.Update(updateMsg{model.Update{Sample: ptr(sample("B", 1, true))}})
		h.m.Update(frameMsg{})
		a := strings.Join(h.m.panels[0].content(), "\n")
		title := h.m.panels[0].title()
		if !strings.Contains(a, "exec") || !strings.Contains(a, "nbdcopy {uri} null:") {
			t.Errorf("%dx%d: A's panel does not show the client's command:\n%s", sz[0], sz[1], a)
		}
		for _, ours := range []string{"conn", "8×2m", "in flight", "request size", "consume", "workload"} {
			if strings.Contains(a, ours) || strings.Contains(title, ours) {
				t.Errorf("%dx%d: A's panel still shows our load's %q:\n%s\n%s", sz[0], sz[1], ours, title, a)
			}
		}
		if sz[0] == 160 && (!strings.Contains(a, "client sndbuf default → 208k eff") || !strings.Contains(a, "own 208k")) {
			t.Errorf("%dx%d: the client's send buffer, changed from outside, is not shown with its own value:\n%s", sz[0], sz[1], a)
		}
		// B, our load, keeps its settings.
		if b := strings.Join(h.m.panels[1].content(), "\n"); !strings.Contains(b, "1 conn") && !strings.Contains(b, "connections") {
			t.Errorf("%dx%d: B lost its load's settings:\n%s", sz[0], sz[1], b)
		}
		h.press("e")
		h.submit("-")
		if a := strings.Join(h.m.panels[0].content(), "\n"); strings.Contains(a, "nbdcopy") {
			t.Errorf("%dx%d: after e - the command is still shown:\n%s", sz[0], sz[1], a)
		}
	}
}

// A real client on a side served by a real server (S, then e) is taken,
// as sweep --exec --server takes it (each finished run moves the export
// once): it was refused, "use sweep --exec 'CLIENT' --server 'SERVER'".
func TestExecOnRealServerIsTaken(t *testing.T) {
	h := newHarness(t, Options{}, 80, 24)
	h.press("2", "S")
	h.submit("nbdkit -U {socket} -f null {size}")
	h.press("e")
	const client = `qemu-img convert -n -f raw -O raw {uri} 'json:{"file":{"driver":"null-co","size":{size}}}'`
	h.submit(client)
	flat := strings.Join(strings.Fields(ansi.Strip(h.view())), " ")
	if strings.Contains(flat, "sweep --exec") || strings.Contains(flat, "no payload count") {
		t.Errorf("the client is refused:\n%s", flat)
	}
	if sd := h.m.cfg.Sides[1]; sd.Exec != client || sd.Server == "" {
		t.Errorf("B runs exec %q against server %q, want the client against the real server", sd.Exec, sd.Server)
	}
}
