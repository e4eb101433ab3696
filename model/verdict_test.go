package model

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// spanOf is a span's figures: client and server cores busy, where they
// were held, the fill and the direction.
func spanOf(client, server Figure, pl Place, full, empty Figure, flow Flow) Figures {
	f := Figures{Flow: flow, Placement: Placement{Setting: pl, LoadCPUs: "0", ServerCPUs: "1"}}
	switch pl {
	case PlaceShared:
		f.Placement.ServerCPUs = "0"
	case PlaceOS:
		f.Placement.LoadCPUs, f.Placement.ServerCPUs = "any", "any"
	}
	f.Client.CoresBusy = client
	f.Server = &Process{CoresBusy: server}
	f.SetFill(Fill{Samples: 400, FullPct: full, EmptyPct: empty, Bytes: 64 << 10, Limit: 4 << 20})
	return f
}

// The sentences the issue found contradicting themselves or their
// figures, each as the same figures give them now.
func TestVerdictWordsTheIssuesCases(t *testing.T) {
	// run -t 5 -P 2 -w 2m: the client at 0.96 of its core and the buffer
	// empty 90%: "the client waited on the server; … the client used all
	// of its 1 core (0.96 cores busy): its own work, not waiting, sets the
	// pace here", and in the explorer "pace client (core full)" above
	// "buf empty 90%: client waits".
	v := VerdictOf(spanOf(0.96, 0.5, PlaceSplit, 2, 90, FlowRead))
	if text := v.Text(nil, Unknown); strings.Contains(text, "client waited on the server") {
		t.Errorf("client bound, buffer empty: %q", text)
	}
	if w := v.WaitShort(); strings.Contains(w, "client waits") || v.PaceShort(false) != "client (core full)" {
		t.Errorf("explorer: pace %q above %q", v.PaceShort(false), w)
	}
	// "the send buffer was full 49%, empty 28% of the time: neither
	// waited long on the other".
	if text := VerdictOf(spanOf(0.6, 0.5, PlaceSplit, 49, 28, FlowRead)).WaitText(); strings.Contains(text, "neither waited long") {
		t.Errorf("full 49%%, empty 28%%: %q", text)
	}
}

var percentWord = regexp.MustCompile(`(full|empty) (\d+)%`)

// checkVerdict lists what a verdict's words say against the figures they
// came from.
func checkVerdict(f Figures) []string {
	v := VerdictOf(f)
	fl := f.Fill()
	text, wait, pace := v.Text(nil, Unknown), v.WaitShort(), v.PaceShort(false)
	all := text + " | " + wait + " | " + pace
	var bad []string
	if strings.Contains(all, "neither waited long") && (fl.FullPct >= fillLong || fl.EmptyPct >= fillLong) {
		bad = append(bad, "neither waited long, with a wait of 20% or more")
	}
	for _, who := range []string{"client", "server"} {
		other := map[string]string{"client": "server", "server": "client"}[who]
		bound := strings.Contains(text, "the "+who+" used all of its") || pace == who+" (core full)"
		if bound != (v.Bound == who) {
			bad = append(bad, fmt.Sprintf("says the %s's core full (%v) against its bound %q", who, bound, v.Bound))
		}
		waited := strings.Contains(text, "the "+who+" waited on the "+other) || strings.Contains(wait, who+" waits")
		if bound && waited {
			bad = append(bad, fmt.Sprintf("the %s waited, and its own work sets the pace", who))
		}
		if waited && who == f.Direction().Sender() && fl.FullPct < fillMost {
			bad = append(bad, fmt.Sprintf("the sender (%s) waited, with the buffer full only %v%%", who, fl.FullPct))
		}
		if waited && who == f.Direction().Receiver() && fl.EmptyPct < fillMost {
			bad = append(bad, fmt.Sprintf("the receiver (%s) waited, with the buffer empty only %v%%", who, fl.EmptyPct))
		}
	}
	if strings.Contains(text, "neither used all of its CPU") && v.ClientCores > 0 &&
		(f.Client.CoresBusy >= paceFull || f.Server.CoresBusy >= paceFull && f.Placement.Setting == PlaceSplit) {
		bad = append(bad, "neither used all of its CPU, with one at 90% or more")
	}
	for _, m := range percentWord.FindAllStringSubmatch(all, -1) {
		want := fl.FullPct
		if m[1] == "empty" {
			want = fl.EmptyPct
		}
		if m[2] != want.Fixed(0) {
			bad = append(bad, fmt.Sprintf("%q where the figure is %s", m[0], want.Fixed(0)))
		}
	}
	return bad
}

// Property: for generated figures (a seeded generator: the same cases
// every run), every pace and wait sentence, long and short, agrees with
// the fill and cores busy it came from.
func TestVerdictWordsAgreeWithTheirFigures(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 3))
	places := []Place{PlaceSplit, PlaceSplit, PlaceShared, PlaceOS}
	flows := []Flow{FlowRead, FlowWrite}
	failed := 0
	for i := 0; i < 20000 && failed < 10; i++ {
		full := Figure(rng.IntN(101))
		empty := Figure(rng.IntN(101 - int(full)))
		f := spanOf(Figure(rng.Float64()*1.1), Figure(rng.Float64()*1.1), places[rng.IntN(len(places))], full, empty, flows[rng.IntN(2)])
		if bad := checkVerdict(f); len(bad) > 0 {
			failed++
			v := VerdictOf(f)
			t.Errorf("client %.2f server %.2f %s, full %v empty %v, %s: %q / %q / %q: %s", f.Client.CoresBusy, f.Server.CoresBusy,
				f.Placement.Setting, full, empty, f.Direction(), v.Text(nil, Unknown), v.WaitShort(), v.PaceShort(false), strings.Join(bad, "; "))
		}
	}
}
