package platform

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/nbd"
)

func TestProbe(t *testing.T) {
	f := Probe()
	if f.OS != runtime.GOOS || f.Cores < 1 || f.Kernel == "" {
		t.Fatalf("facts %+v", f)
	}
	if f.UnixSndbufDefault <= 0 || f.UnixSndbufMax < f.UnixSndbufDefault || f.TCPSndbufDefault <= 0 {
		t.Fatalf("buffer facts %+v", f)
	}
	// The limit is worked out and confirmed on every OS (on macOS it used
	// to come out as 0: asking for 1 GiB fails with ENOBUFS there).
	if l := f.SndbufLimit; !l.Known() || !l.Probed || l.SysctlValue <= 0 || f.UnixSndbufMax != l.MaxEffective {
		t.Fatalf("limit %+v (max %d)", l, f.UnixSndbufMax)
	}
	if runtime.GOOS == "darwin" && (f.Doubles || f.SndbufLimit.Rules != "xnu" || f.SndbufLimit.MaxRequest > f.Limits["kern.ipc.maxsockbuf"]) {
		t.Fatalf("darwin facts %+v", f)
	}
	if runtime.GOOS == "linux" {
		if !f.Doubles || f.Limits["net.core.wmem_max"] <= 0 {
			t.Fatalf("linux facts %+v", f)
		}
		// The largest effective send buffer is twice wmem_max.
		if f.UnixSndbufMax != 2*f.Limits["net.core.wmem_max"] {
			t.Fatalf("max %d, wmem_max %d", f.UnixSndbufMax, f.Limits["net.core.wmem_max"])
		}
	}
}

// On every OS the "macos" setting must give macOS's 8 KiB effective.
func TestMacOSEmulationIsEightKiB(t *testing.T) {
	_, eff, err := nbd.ProbeSocketBuffer("unix", nbd.SendBuf, MacOSRequest())
	if err != nil {
		t.Fatal(err)
	}
	if eff != 8<<10 {
		t.Fatalf("macos emulation: request %d gives %d, want 8192", MacOSRequest(), eff)
	}
}

func TestClampDetectionAndFix(t *testing.T) {
	f := Probe()
	// Ask for more than the kernel allows and check the fix names the limit.
	req := f.SndbufLimit.MaxRequest * 2
	_, eff, err := nbd.ProbeSocketBuffer("unix", nbd.SendBuf, req)
	if f.SndbufLimit.Over == OverRefuses {
		// macOS before 14.4: ENOBUFS, and Refuses says so with the fix.
		c, refused := f.SndbufLimit.Refuses(nbd.SendBuf, req)
		if !errors.Is(err, unix.ENOBUFS) || !refused || !strings.Contains(c.Fix, "kern.ipc.maxsockbuf=") {
			t.Fatalf("request %d above a refusing limit: %v, %+v", req, err, c)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	c, clamped := CheckClamp(nbd.SendBuf, req, eff)
	if !clamped {
		t.Fatalf("request %d, effective %d: not reported as clamped", req, eff)
	}
	if runtime.GOOS == "linux" {
		if c.Limit != "net.core.wmem_max" || !strings.Contains(c.Fix, "sysctl -w net.core.wmem_max=") || !strings.Contains(c.Where, "/etc/sysctl.d/") {
			t.Fatalf("clamp %+v", c)
		}
	}
	// A granted request is not a clamp.
	_, eff, _ = nbd.ProbeSocketBuffer("unix", nbd.SendBuf, 64<<10)
	if _, clamped := CheckClamp(nbd.SendBuf, 64<<10, eff); clamped {
		t.Fatalf("64k (effective %d) reported as clamped", eff)
	}
	if runtime.GOOS == "linux" && !strings.Contains(Explain(64<<10, 128<<10), "doubles") {
		t.Fatalf("explain: %q", Explain(64<<10, 128<<10))
	}
}

// measuredOnLinux says whether a figure only Linux gives is to be checked
// further here. On Linux it must be measured (ok) and positive; elsewhere
// it checks the figure was not given (ok false), never a 0 passed off as a
// measurement.
func measuredOnLinux[T ~int64 | ~float64](t *testing.T, what string, got T, ok bool) bool {
	t.Helper()
	if runtime.GOOS != "linux" {
		if ok {
			t.Errorf("measured %v on %s, where it cannot be", got, runtime.GOOS)
		}
		return false
	}
	if !ok || got <= 0 {
		t.Fatalf("%s = %v, %v: want a positive measurement", what, got, ok)
	}
	return true
}

// FaultCost measures where the kernel counts the thread's faults (Linux):
// a positive time per fault; elsewhere it says it did not measure.
func TestFaultCost(t *testing.T) {
	per, ok := FaultCost()
	if !measuredOnLinux(t, "FaultCost (a time per fault)", per, ok) {
		return
	}
	t.Logf("a minor page fault costs %v here", per)
}

// CPUBusy reads the machine's busy CPU seconds where /proc/stat exists,
// and they grow while this test burns CPU.
func TestCPUBusy(t *testing.T) {
	before, ok := CPUBusy()
	if !measuredOnLinux(t, "CPUBusy", before, ok) {
		return
	}
	x := 0
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); x++ {
	}
	after, _ := CPUBusy()
	if after <= before {
		t.Errorf("busy CPU did not grow over 200 ms of spinning (%d loops): %v → %v", x, before, after)
	}
}
