package main

import (
	"errors"
	"fmt"
	"testing"

	"nbdscope/model"
)

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{errors.New("boom"), exitFailure},
		{usageErrorf("bad flag"), exitUsage},
		{exitError{exitInterrupted, errors.New("interrupted")}, exitInterrupted},
		{fmt.Errorf("wrapped: %w", exitError{exitFailure, errors.New("crash")}), exitFailure},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// TestRunOutcome: a complete run exits 0, one with a crash 1 (even if it
// was also interrupted), one only interrupted 130; the error says why.
func TestRunOutcome(t *testing.T) {
	crash := model.Report{Partial: true, PartialReason: "side A load died (exit status 1): target X: connection lost",
		Crashes: []model.Crash{{Side: "A", Role: model.RoleLoad}}}
	stopped := model.Report{Partial: true, PartialReason: "interrupted after 2.0s of 8s"}
	for _, c := range []struct {
		name        string
		rep         model.Report
		interrupted bool
		want        int
	}{
		{"complete", model.Report{}, false, exitOK},
		{"crash", crash, false, exitFailure},
		{"crash and ctrl+c", crash, true, exitFailure},
		{"ctrl+c", stopped, true, exitInterrupted},
	} {
		err := runOutcome(c.rep, c.interrupted)
		if got := exitCode(err); got != c.want {
			t.Errorf("%s: exit %d (%v), want %d", c.name, got, err, c.want)
		}
		if err != nil && err.Error() != "the run is partial: "+c.rep.PartialReason {
			t.Errorf("%s: error %q", c.name, err)
		}
	}
}
