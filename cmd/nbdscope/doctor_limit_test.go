package main

import (
	"strings"
	"testing"

	"nbdscope/platform"
)

// doctor on a Mac before 14.4 with the default kern.ipc.maxsockbuf: the
// limit is not 0, and 8m gets the exact fix without being asked for.
func TestDoctorXNULimit(t *testing.T) {
	l := platform.Limit{Rules: "xnu", Over: platform.OverRefuses, MaxRequest: 7456540, MaxEffective: 7456540,
		Sysctl: "kern.ipc.maxsockbuf", SysctlValue: 8 << 20, Probed: true}
	line := limitLine(l)
	for _, want := range []string{"largest request granted in full 7456540 bytes (7.11 MiB)", "kern.ipc.maxsockbuf = 8m × 2048/2304",
		"refuses (setsockopt fails with ENOBUFS)", "sudo sysctl kern.ipc.maxsockbuf=9437184"} {
		if !strings.Contains(line, want) {
			t.Errorf("limit line %q lacks %q", line, want)
		}
	}
	got, ok, err := doctorProbe(l, 8<<20)
	if err != nil || ok || !strings.Contains(got, "refused") || !strings.Contains(got, "sudo sysctl kern.ipc.maxsockbuf=9437184") {
		t.Fatalf("8m: %q %v %v", got, ok, err)
	}
	// From macOS 14.4 the kernel clamps to kern.ipc.maxsockbuf itself.
	l.Over, l.MaxRequest, l.MaxEffective = platform.OverClamps, 8<<20, 8<<20
	if line := limitLine(l); !strings.Contains(line, "above it the kernel clamps") || strings.Contains(line, "for 8m") {
		t.Errorf("clamping limit line %q", line)
	}
}

func TestDoctorLinuxLimit(t *testing.T) {
	l := platform.Limit{Rules: "linux", Doubles: true, Over: platform.OverClamps, MaxRequest: 212992, MaxEffective: 425984,
		Sysctl: "net.core.wmem_max", SysctlValue: 212992, Probed: true}
	line := limitLine(l)
	for _, want := range []string{"largest request granted in full 208k (effective 416k; net.core.wmem_max = 208k)", "clamps", "sudo sysctl -w net.core.wmem_max=8388608"} {
		if !strings.Contains(line, want) {
			t.Errorf("limit line %q lacks %q", line, want)
		}
	}
}
