package platform

import (
	"slices"
	"strings"
	"testing"

	"nbdscope/nbd"
)

// maxAsked is the largest size a probe asked for.
func maxAsked(asked []int) int { return slices.Max(asked) }

// Before macOS 14.4 the limit is kern.ipc.maxsockbuf×2048/2304 and a
// request above it is refused with ENOBUFS.
func TestXNULimitRefusesAboveAdjustedMax(t *testing.T) {
	k := newXNU("23.3.0")
	l := XNURules{}.Limit(k)
	if l.MaxRequest != 7456540 || l.MaxEffective != 7456540 || l.Over != OverRefuses || !l.Probed || l.Doubles {
		t.Fatalf("limit %+v, want 7456540 refused above, probed", l)
	}
	if l.SysctlValue != 8<<20 || l.SysctlCeiling != 16<<20 || l.Note != "" {
		t.Fatalf("limit %+v", l)
	}
	if m := maxAsked(k.asked); m > k.sbMax+1 {
		t.Fatalf("the probe asked for %d, above kern.ipc.maxsockbuf+1", m)
	}
	if len(k.asked) > 4 {
		t.Fatalf("a limit the sysctl predicts should be confirmed in a few probes, took %d: %v", len(k.asked), k.asked)
	}
}

// From macOS 14.4 sbreserve clamps to sb_max: the limit is
// kern.ipc.maxsockbuf itself and nothing is refused.
func TestXNULimitClampsFrom14_4(t *testing.T) {
	k := newXNU("24.1.0")
	l := XNURules{}.Limit(k)
	if l.MaxRequest != 8<<20 || l.MaxEffective != 8<<20 || l.Over != OverClamps || !l.Probed {
		t.Fatalf("limit %+v, want 8 MiB clamped above", l)
	}
	if _, refused := l.Refuses(nbd.SendBuf, 16<<20); refused {
		t.Fatal("a clamping kernel reported as refusing")
	}
	c, clamped := l.Check(nbd.SendBuf, 16<<20, 8<<20)
	if !clamped || c.Fix != "sudo sysctl kern.ipc.maxsockbuf=16777216" || c.Effective != 8<<20 {
		t.Fatalf("16m on a clamping XNU: %+v %v", c, clamped)
	}
}

// The release is a prediction; the probe has the last word, bisecting on
// ENOBUFS when the sysctl's prediction does not hold.
func TestXNUProbeCorrectsThePrediction(t *testing.T) {
	// A kernel that says 23.3 but clamps: probe finds 8 MiB, clamped above.
	k := newXNU("23.4.0")
	l := XNURules{}.Limit(&predictOnly{Kernel: k, predict: "23.3.0"})
	if l.MaxRequest != 8<<20 || l.Over != OverClamps || !strings.Contains(l.Note, "not the") {
		t.Fatalf("limit %+v", l)
	}
	// An unreadable sysctl: the probe bisects within 8 MiB + 1.
	k2 := newXNU("22.6.0")
	l2 := XNURules{}.Limit(&noSysctl{k2})
	if l2.MaxRequest != 7456540 || l2.Over != OverRefuses || l2.SysctlValue != 0 {
		t.Fatalf("limit without sysctl %+v", l2)
	}
	if m := maxAsked(k2.asked); m > 8<<20+1 {
		t.Fatalf("the bisection asked for %d", m)
	}
	// A raised kern.ipc.maxsockbuf raises the limit the same way.
	k3 := newXNU("23.3.0")
	k3.sbMax = 4 << 20
	if l3 := (XNURules{}).Limit(k3); l3.MaxRequest != 4<<20*2048/2304 {
		t.Fatalf("4 MiB maxsockbuf: limit %+v", l3)
	}
}

// A request above the limit gets the exact fix, and the fix works: with
// kern.ipc.maxsockbuf set to the number it names, the request is granted.
func TestXNURefusalMessageAndFix(t *testing.T) {
	k := newXNU("23.3.0")
	l := XNURules{}.Limit(k)
	if _, refused := l.Refuses(nbd.SendBuf, 4<<20); refused {
		t.Fatal("4m refused under a 7.1 MiB limit")
	}
	c, refused := l.Refuses(nbd.SendBuf, 8<<20)
	if !refused || !c.Refused || c.Fix != "sudo sysctl kern.ipc.maxsockbuf=9437184" || c.Persist != "kern.ipc.maxsockbuf=9437184" {
		t.Fatalf("8m: %+v %v", c, refused)
	}
	msg := c.String()
	for _, want := range []string{"SO_SNDBUF 8m", "7456540 bytes (7.11 MiB)", "kern.ipc.maxsockbuf", "ENOBUFS", "sudo sysctl kern.ipc.maxsockbuf=9437184"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("message %q lacks %q", msg, want)
		}
	}
	k.sbMax = 9437184
	if eff, err := k.Set(nbd.SendBuf, 8<<20); err != nil || eff != 8<<20 {
		t.Fatalf("after the fix 8m gives %d, %v", eff, err)
	}
	k.sbMax = 9437183
	if _, err := k.Set(nbd.SendBuf, 8<<20); err == nil {
		t.Fatal("one byte less than the fix still granted 8m: the fix is not exact")
	}
	// Past the Mac's ceiling the fix says the sysctl itself will fail.
	k.sbMax, k.nmbclusters = 8<<20, 32768
	small := XNURules{}.Limit(k)
	if small.SysctlCeiling != 4<<20 {
		t.Fatalf("ceiling %d", small.SysctlCeiling)
	}
	c, _ = small.Refuses(nbd.SendBuf, 8<<20)
	if !strings.Contains(c.Fix, "ERANGE") {
		t.Fatalf("fix above the ceiling: %q", c.Fix)
	}
}

// The effective size is the one read back right after setting. On XNU a
// live readback is not it: sends lower sb_hiwat by the bytes queued in
// the peer (raw), and since xnu-2782 getsockopt adds them back, so a set
// during load reads as the request plus what was queued then. Neither
// may light up "clamped".
func TestXNUEffectiveReadback(t *testing.T) {
	for _, raw := range []bool{false, true} {
		k := newXNU("23.3.0")
		k.rawReadback = raw
		l := XNURules{}.Limit(k)
		s := k.socket()
		if err := s.setsockopt(nbd.SendBuf, 2<<20); err != nil {
			t.Fatal(err)
		}
		eff := s.getsockopt(nbd.SendBuf) // right after setting, before data flows
		if eff != 2<<20 {
			t.Fatalf("raw=%v: readback right after setting %d, want the request (no doubling)", raw, eff)
		}
		s.send(1536 << 10)
		live := s.getsockopt(nbd.SendBuf)
		if raw && live != 512<<10 || !raw && live != 2<<20 {
			t.Fatalf("raw=%v: live readback with 1.5 MiB queued: %d", raw, live)
		}
		if l.Clamped(2<<20, live) {
			t.Fatalf("raw=%v: a live readback of %d flagged 2m as clamped", raw, live)
		}
		if _, c := l.Check(nbd.SendBuf, 2<<20, live); c {
			t.Fatalf("raw=%v: Check flagged a granted request", raw)
		}
		s.peerRead(1536 << 10)
		if got := s.getsockopt(nbd.SendBuf); got != 2<<20 {
			t.Fatalf("raw=%v: after the peer drained, readback %d", raw, got)
		}
		// Set 1m while 512k are queued: sbreserve stores 1m, the queued
		// bytes come back on top as the peer reads.
		s.send(512 << 10)
		if err := s.setsockopt(nbd.SendBuf, 1<<20); err != nil {
			t.Fatal(err)
		}
		s.peerRead(512 << 10)
		if got := s.getsockopt(nbd.SendBuf); got != 1<<20+512<<10 {
			t.Fatalf("raw=%v: set during load then drained: %d", raw, got)
		}
	}
}

// macOS 14.4's sbreserve refuses a second request above sb_max on a
// socket already at sb_max (ENOBUFS), while the first is clamped.
func TestXNUClampThenRefuseOnSameSocket(t *testing.T) {
	k := newXNU("24.0.0")
	s := k.socket()
	if err := s.setsockopt(nbd.SendBuf, 16<<20); err != nil || s.getsockopt(nbd.SendBuf) != 8<<20 {
		t.Fatalf("first 16m: %v, %d", err, s.getsockopt(nbd.SendBuf))
	}
	if err := s.setsockopt(nbd.SendBuf, 16<<20); err == nil {
		t.Fatal("second 16m on a socket at sb_max was granted")
	}
}

func TestLinuxLimitFromDouble(t *testing.T) {
	k := &linuxKernel{wmemMax: 212992}
	l := LinuxRules{}.Limit(k)
	if l.MaxRequest != 212992 || l.MaxEffective != 425984 || l.Over != OverClamps || !l.Doubles || !l.Probed {
		t.Fatalf("limit %+v", l)
	}
	c, clamped := l.Check(nbd.SendBuf, 2<<20, 425984)
	if !clamped || c.Fix != "sudo sysctl -w net.core.wmem_max=2097152" || c.Effective != 425984 {
		t.Fatalf("2m: %+v %v", c, clamped)
	}
	if _, clamped := l.Check(nbd.SendBuf, 64<<10, 128<<10); clamped {
		t.Fatal("64k doubled to 128k reported as clamped")
	}
	if _, refused := l.Refuses(nbd.SendBuf, 64<<20); refused {
		t.Fatal("Linux never refuses")
	}
	if c, _ := l.Check(nbd.RecvBuf, 2<<20, 425984); c.Limit != "net.core.rmem_max" {
		t.Fatalf("rcvbuf limit %q", c.Limit)
	}
	if l.LadderTop() != 0 {
		t.Fatal("Linux clamps: the ladder is not cut")
	}
	if m := maxAsked(k.asked); m > 212992+1 {
		t.Fatalf("probe asked %d", m)
	}
}

// The ladder stops where the kernel refuses.
func TestLadderTop(t *testing.T) {
	if top := (XNURules{}).Limit(newXNU("23.3.0")).LadderTop(); top != 7456540 {
		t.Fatalf("refusing XNU ladder top %d", top)
	}
	if top := (XNURules{}).Limit(newXNU("24.0.0")).LadderTop(); top != 0 {
		t.Fatalf("clamping XNU ladder top %d", top)
	}
}

// ProbeWith fills the facts from the rules and the kernel.
func TestProbeWithXNUDouble(t *testing.T) {
	f := ProbeWith(XNURules{}, newXNU("23.3.0"))
	if f.Doubles || f.UnixSndbufDefault != 8192 || f.UnixSndbufMax != 7456540 || f.Limits["kern.ipc.maxsockbuf"] != 8<<20 || f.SndbufLimit.Over != OverRefuses {
		t.Fatalf("facts %+v", f)
	}
}

// predictOnly reports one release to the rules while the kernel behaves
// as another.
type predictOnly struct {
	Kernel
	predict string
}

func (p *predictOnly) Release() string { return p.predict }

type noSysctl struct{ *xnuKernel }

func (noSysctl) Sysctl(string) (int, error) { return 0, errNoSysctl }
