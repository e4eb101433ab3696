package main

import (
	"strings"
	"testing"
)

// TestIdenticalSidesWithinNoise (issue 24): a run whose sides have the
// same settings says their difference is within noise and names no
// winner.
func TestIdenticalSidesWithinNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a pair for 6 s")
	}
	code, out, errs := runBin(t, "run", "--sndbuf", "default", "--duration", "6s", "--size", "1g")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "within noise") || strings.Contains(out, "beyond the noise") {
		t.Errorf("identical sides:\n%s", out)
	}
}
