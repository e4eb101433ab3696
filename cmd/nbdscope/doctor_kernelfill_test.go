package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestFillCostBelowResolution: a difference the timed loop cannot tell
// from its own noise (under the spread of its bare rounds) is null in
// doctor's JSON with its below_resolution flag and the loop's resolution
// beside it, never a cost of 0; a difference over it is the figure.
// Bare rounds of 1.00, 1.02 and 1.01 ms over 1000 calls spread 20 ns a
// call: the watched rounds' 10 ns more is under it, the others' 200 ns
// over it.
func TestFillCostBelowResolution(t *testing.T) {
	ms := func(us ...int) []time.Duration {
		var out []time.Duration
		for _, u := range us {
			out = append(out, time.Duration(u)*time.Microsecond)
		}
		return out
	}
	r := fillCostRounds{bare: ms(1000, 1020, 1010), watched: ms(1010, 1030, 1020), bystander: ms(1200, 1220, 1210)}
	c := r.cost(1000)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	t.Log(js)
	for _, want := range []string{`"watched_ns_per_call":null`, `"watched_below_resolution":true`, `"other_ns_per_call":200`, `"other_below_resolution":false`, `"resolution_ns_per_call":20`, `"calls":3000`} {
		if !strings.Contains(js, want) {
			t.Errorf("doctor's fill cost JSON lacks %s: %s", want, js)
		}
	}
	line := fillCostLine(doctorKernelFill{Cost: c})
	if !strings.Contains(line, "data sockets too little for the loop to tell apart from its own noise") || !strings.Contains(line, "any other socket call 200 ns of CPU") || !strings.Contains(line, "it tells apart 20 ns a call") {
		t.Errorf("doctor's line: %s", line)
	}
	// Bare rounds alike to the nanosecond: the resolution is 1 ns, and a
	// cost under it (none) is still below it, not 0.
	same := fillCostRounds{bare: ms(1000, 1000), watched: ms(1000, 1000), bystander: ms(1001, 1001)}.cost(1000)
	if same.ResolutionNs != 1 || same.WatchedNs != nil || !same.WatchedBelow || same.BystanderNs == nil || *same.BystanderNs != 1 {
		t.Errorf("bare rounds alike: %+v", *same)
	}
}

// TestFoundLine: doctor says how the fill timer finds a watched socket,
// and so from when it measures it: when watched (the iterator, with what
// a run cost), or at its next send call with why not the iterator.
func TestFoundLine(t *testing.T) {
	ns := 13000.0
	for _, c := range []struct {
		f    *doctorFound
		want string
	}{
		{nil, "how the fill timer finds a watched socket: n/a"},
		{&doctorFound{By: "iterator", IterNs: &ns, IterVisits: 69}, "measured from the moment it is watched: an iterator over unix sockets finds it (13000 ns of CPU a run over 68 unix sockets here"},
		{&doctorFound{By: "iterator", IterNs: &ns, IterVisits: 69}, "on only while such a socket is watched: off with doctor's sockets watched, so no send call paid for it)"},
		{&doctorFound{By: "iterator", FindAtSendCalls: true}, "finds it (a socket of another network namespace is found at its next send call, by a program at send calls that is on only while such a socket is watched: on here"},
		{&doctorFound{By: "send", IteratorNA: "no iter/unix"}, "measured from its next send call after it is watched, where that call finds it: an idle sender, or a server stuck with its buffer full, reads as nothing until then (no iterator over unix sockets: no iter/unix)"},
	} {
		if got := foundLine(c.f); !strings.Contains(got, c.want) {
			t.Errorf("foundLine(%+v) = %q, want it to hold %q", c.f, got, c.want)
		}
	}
	b, _ := json.Marshal(doctorFound{By: "send", IteratorNA: "no iter/unix"})
	if want := `{"by":"send","iterator_na":"no iter/unix","iterator_ns_per_run":null,"iterator_visits":0,"find_at_send_calls":false}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
}
