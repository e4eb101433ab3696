package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExecClientMovingNothingFails: a real client that moves nothing is
// no clean measurement (issue 33: 'true {uri}' exited 0, "partial":
// false, restarted in a tight loop; 'sh -c "sleep 1000" {uri}' gave "B/A
// 0.00x, beyond the noise"). One that exits at once ends its side after
// a few runs, naming the command and how its last run ended; one that
// never moves a byte has its throughput n/a; either run is partial and
// exits 1.
func TestExecClientMovingNothingFails(t *testing.T) {
	realSidesHome(t)
	for _, c := range []struct {
		client, reason string
	}{
		{"true {uri}", "the client moved no payload in "},
		{`sh -c "sleep 1000" {uri}`, `side B: the client "sh -c \"sleep 1000\" {uri}" moved no payload in the whole run`},
	} {
		code, stdout, stderr := runBin(t, "run", "-t", "2", "--mode", "concurrent", "--exec-b", c.client, "-J")
		var rep struct {
			Partial       bool   `json:"partial"`
			PartialReason string `json:"partial_reason"`
			Sides         []struct {
				Summary struct {
					Throughput *float64 `json:"throughput_bps"`
				} `json:"summary"`
			} `json:"sides"`
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", c.client, err, stderr)
		}
		if code != exitFailure || !rep.Partial || !strings.Contains(rep.PartialReason, c.reason) {
			t.Errorf("%s: exit %d, partial %v (%q); want exit 1, partial, %q", c.client, code, rep.Partial, rep.PartialReason, c.reason)
		}
		if len(rep.Sides) != 2 || rep.Sides[1].Summary.Throughput != nil {
			t.Errorf("%s: B's throughput %v, want null (n/a)", c.client, rep.Sides[1].Summary.Throughput)
		}
		if c.client == "true {uri}" && !strings.Contains(rep.PartialReason, "its last run: true 'nbd+unix:") {
			t.Errorf("%s: the reason does not name the command shell-quoted and how it ended: %q", c.client, rep.PartialReason)
		}
	}
}
