package main

import (
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// The explorer and a sweep have no --duration: their configuration keeps
// 0, "until stopped", and only run gets the 10 s default. (A default set
// for every command made the explorer's run end at 0:10.)
func TestDurationDefaultOnlyWithTheFlag(t *testing.T) {
	for _, c := range []struct {
		name         string
		withDuration bool
		want         time.Duration
	}{
		{"explorer", false, 0},
		{"sweep", false, 0},
		{"run", true, 10 * time.Second},
	} {
		cmd := &cobra.Command{Use: c.name}
		lf := addLoadFlags(testApp(), cmd, c.withDuration)
		if err := cmd.ParseFlags(nil); err != nil {
			t.Fatal(err)
		}
		cfg, err := lf.config(testApp())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := time.Duration(cfg.Duration); got != c.want {
			t.Errorf("%s: duration %v, want %v", c.name, got, c.want)
		}
	}
}
