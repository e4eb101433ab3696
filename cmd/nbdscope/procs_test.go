package main

import (
	"runtime/debug"
	"testing"
)

// The controllers (the explorer, run, sweep, doctor, …) run on one
// processor; the data movers (children, serve) and a user's GOMAXPROCS
// are left alone.
func TestOneProcessorFor(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{
		{nil, "", true},
		{[]string{"--preset", "macos-gap"}, "", true},
		{[]string{"run", "-t", "5"}, "", true},
		{[]string{"sweep", "--preset", "sweep"}, "", true},
		{[]string{"__child", "server", "{}"}, "", false},
		{[]string{"serve", "-k", "s.sock"}, "", false},
		{[]string{"run"}, "4", false},
	} {
		if got := oneProcessorFor(c.args, c.env); got != c.want {
			t.Errorf("%q with GOMAXPROCS=%q: one processor %v, want %v", c.args, c.env, got, c.want)
		}
	}
}

// A controller collects its garbage at GOGC 400 (its small heap was
// collected more than once a second at 100); the data movers and a
// user's GOGC are left alone.
func TestControllerGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct {
		args []string
		env  string
		want int
	}{
		{nil, "", controllerGCPercent},
		{[]string{"run", "-t", "5"}, "", controllerGCPercent},
		{[]string{"__child", "server", "{}"}, "", 100},
		{[]string{"serve", "-k", "s.sock"}, "", 100},
		{[]string{"run"}, "50", 100},
	} {
		debug.SetGCPercent(100)
		controllerGC(c.args, c.env)
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("%q with GOGC=%q: GOGC %d, want %d", c.args, c.env, got, c.want)
		}
	}
}
