package model

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"nbdscope/stats"
)

// measuredRow is a row of a size whose measurements had the given GiB/s,
// its own throughput the median's.
func measuredRow(buf string, gibps ...float64) SweepRow {
	ms := make([]SweepMeasurement, len(gibps))
	for i, g := range gibps {
		ms[i] = SweepMeasurement{Seconds: 1 / g, ThroughputBps: Figure(g * GiB)}
	}
	sorted := slices.Clone(gibps)
	slices.Sort(sorted)
	r := SweepRow{Buffer: buf, ThroughputBps: Figure(sorted[len(sorted)/2] * GiB), Repeats: len(gibps)}
	r.SetSpread(ms)
	return r
}

// TestOptimumVerdict: a lead within noise names no optimum and says how
// many repeats would tell; a lead beyond it names the fastest; with one
// measurement a size nothing is judged.
func TestOptimumVerdict(t *testing.T) {
	for _, c := range []struct {
		name     string
		rows     []SweepRow
		kind     OptimumKind
		named    string
		tied     []string
		runnerUp string
	}{
		{"close", []SweepRow{measuredRow("default", 1.4, 1.42, 1.44), measuredRow("1m", 3.40, 3.42, 3.44), measuredRow("2m", 3.38, 3.41, 3.43)},
			OptimumNoneClear, "", []string{"1m", "2m"}, "2m"},
		{"far", []SweepRow{measuredRow("default", 1.4, 1.42, 1.44), measuredRow("1m", 3.40, 3.41, 3.42), measuredRow("2m", 3.0, 3.01, 3.02)},
			OptimumClear, "1m", []string{"1m"}, "2m"},
		{"one each", []SweepRow{measuredRow("1m", 3.4), measuredRow("2m", 3.0)}, OptimumUnjudged, "", nil, "2m"},
		{"saved without measurements", []SweepRow{{Buffer: "1m", ThroughputBps: 3.4 * GiB}, {Buffer: "2m", ThroughputBps: 3 * GiB}},
			OptimumUnjudged, "", nil, "2m"},
	} {
		o := OptimumOf(c.rows)
		v := o.Verdict
		if v.Kind != c.kind || o.Named() != c.named || !slices.Equal(v.Tied, c.tied) || v.RunnerUp != c.runnerUp || o.Buffer != "1m" {
			t.Errorf("%s: %+v, want %s named %q tied %v runner-up %s", c.name, o, c.kind, c.named, c.tied, c.runnerUp)
		}
	}
	close := OptimumOf([]SweepRow{measuredRow("1m", 3.40, 3.42, 3.44), measuredRow("2m", 3.38, 3.41, 3.43)})
	if r := close.Verdict.Repeats; r <= 3 && r != stats.TellNever {
		t.Errorf("none clear: repeats that would tell %d", r)
	}
	far := OptimumOf([]SweepRow{measuredRow("default", 1.4, 1.42, 1.44), measuredRow("1m", 3.40, 3.41, 3.42)})
	if d := far.Verdict.VsDefault; d.Kind != stats.Beyond || !(d.Lo > 2.3 && d.Hi < 2.5) || !strings.HasPrefix(d.Cell(), "2.40x [") {
		t.Errorf("vs default %+v %q", d, d.Cell())
	}
}

// TestRepeatsThatWouldTell: two sizes 100 ± 10 and 110 ± 10 MB/s, three
// repeats each, are not told apart; by hand (stats.TestTell) nine repeats
// a size would tell them (phrase's TestOptimumWords: every output says
// so from the verdict).
func TestRepeatsThatWouldTell(t *testing.T) {
	o := OptimumOf([]SweepRow{measuredRow("1m", 0.090, 0.100, 0.110), measuredRow("2m", 0.100, 0.110, 0.120)})
	if o.Verdict.Kind != OptimumNoneClear || o.Verdict.Repeats != 9 {
		t.Fatalf("%+v", o.Verdict)
	}
}

// TestSweepReadJudgesAgain: a sweep read from JSON is judged from its
// rows, whatever optimum the file held (a version 2 file's "noise").
func TestSweepReadJudgesAgain(t *testing.T) {
	rows := []SweepRow{measuredRow("1m", 3.40, 3.42, 3.44), measuredRow("2m", 3.38, 3.41, 3.43)}
	old := SweepReport{Version: 2, Rows: rows}
	data, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	stale := strings.Replace(string(data), `"optimum":null`, `"optimum":{"buffer":"2m","throughput_bps":1,"vs_default":null,"within_5pct":["2m"],"noise":{"known":true,"within_noise":false}}`, 1)
	var back SweepReport
	if err := json.Unmarshal([]byte(stale), &back); err != nil {
		t.Fatal(err)
	}
	if o := back.Optimum; o == nil || o.Buffer != "1m" || o.Verdict.Kind != OptimumNoneClear {
		t.Fatalf("read back %+v", o)
	}
	again, err := json.Marshal(back)
	if err != nil || !strings.Contains(string(again), `"verdict":{"kind":"none_clear"`) {
		t.Fatalf("written again: %s %v", again, err)
	}
}
