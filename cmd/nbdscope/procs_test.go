package main

import "testing"

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
