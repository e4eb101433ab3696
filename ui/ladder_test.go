package ui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"nbdscope/model"
	"nbdscope/platform"
)

// macOS before 14.4 with the default kern.ipc.maxsockbuf: sbreserve
// refuses above 7456540 bytes.
var xnuRefusing = platform.Limit{Rules: "xnu", Over: platform.OverRefuses, MaxRequest: 7456540, MaxEffective: 7456540,
	Sysctl: "kern.ipc.maxsockbuf", SysctlValue: 8 << 20, Probed: true}

func TestStepBufStopsAtTheLimit(t *testing.T) {
	size := func(n int) model.Buf { return model.Buf{Kind: model.BufSize, Bytes: n} }
	top := xnuRefusing.LadderTop()
	if v, ok := stepBuf(size(2<<20), 1, 212992, top); v != "4m" || !ok {
		t.Fatalf("2m + under a 7.1 MiB limit: %q %v", v, ok)
	}
	if v, ok := stepBuf(size(4<<20), 1, 212992, top); ok {
		t.Fatalf("4m + under a 7.1 MiB limit gave %q: 8m would fail with ENOBUFS", v)
	}
	if v, ok := stepBuf(size(4<<20), -1, 212992, top); v != "2m" || !ok {
		t.Fatalf("4m -: %q %v", v, ok)
	}
	// Linux clamps rather than refuses: the ladder goes on to 8m.
	if v, ok := stepBuf(size(4<<20), 1, 212992, platform.Limit{Rules: "linux", Doubles: true, Over: platform.OverClamps, MaxRequest: 212992}.LadderTop()); v != "8m" || !ok {
		t.Fatalf("linux 4m +: %q %v", v, ok)
	}
}

// + at the limit sends nothing and says why, with the exact fix.
func TestBufUpAtXNULimitSaysFix(t *testing.T) {
	h := newHarness(t, Options{}, 100, 30)
	h.m.com.facts.SndbufLimit = xnuRefusing
	h.m.cfg.Sides[1].SndBuf = model.Buf{Kind: model.BufSize, Bytes: 4 << 20}
	h.m.focus = 1
	h.press("+")
	if n := len(h.f.appliedCopy()); n != 0 {
		t.Fatalf("+ at the limit applied %v", h.f.appliedCopy())
	}
	for _, want := range []string{"stops at 4m", "8m is above", "7456540 bytes (7.11 MiB)", "sudo sysctl kern.ipc.maxsockbuf=9437184"} {
		if !strings.Contains(h.m.msg.text, want) {
			t.Fatalf("message %q lacks %q", h.m.msg.text, want)
		}
	}
}

// The header shows a Mac's real limit, not n/a (the old probe asked for
// 1 GiB, which XNU refuses, and got 0).
func TestHeaderShowsXNULimit(t *testing.T) {
	f := newFake()
	f.facts = platform.Facts{OS: "darwin", Arch: "arm64", Kernel: "Darwin 23.3.0", Cores: 8,
		UnixSndbufDefault: 8192, UnixRcvbufDefault: 8192, UnixSndbufMax: 7456540,
		Limits: map[string]int{"kern.ipc.maxsockbuf": 8 << 20}, SndbufLimit: xnuRefusing}
	m := newModel(f, Options{PresetName: "linux-gap"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	if v, want := m.View(), "unix SO_SNDBUF default 8k, max 7.11 MiB (kern.ipc.maxsockbuf 8m)"; !strings.Contains(v, want) {
		t.Fatalf("header lacks %q:\n%s", want, v)
	}
}
