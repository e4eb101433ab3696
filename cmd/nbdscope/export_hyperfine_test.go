package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"nbdscope/internal/reporttest"
	"nbdscope/internal/testbin"
	"nbdscope/model"
	"nbdscope/stats"
	"nbdscope/sweep"
)

// madeUpSpreadSweep is madeUpSweep with three measurements per row: the
// median's time rounded to 1/1024 s, and spread/1024 s either side, in the
// order (less, median, more). The times are exact binary fractions, so
// their statistics come out the same on every machine (no rounding for a
// fused multiply-add to change) and a golden file holds them.
func madeUpSpreadSweep(spread float64) model.SweepReport {
	rep := reporttest.Sweep()
	rep.Nbdscope, rep.Time = "test", time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i := range rep.Rows {
		r := &rep.Rows[i]
		r.Seconds = math.Round(r.Seconds*1024) / 1024
		r.ThroughputBps = model.Throughput(uint64(rep.Spec.Bytes), r.Seconds)
		r.ClientUserS, r.ClientSysS = 0.125, 0.25
		var times []float64
		r.Measurements = nil
		for _, d := range []float64{-spread, 0, spread} {
			sec := r.Seconds + d/1024
			times = append(times, sec)
			r.Measurements = append(r.Measurements, model.SweepMeasurement{Seconds: sec, ClientUserS: 0.125, ClientSysS: 0.25,
				ThroughputBps: model.Throughput(uint64(rep.Spec.Bytes), sec)})
		}
		s := stats.Of(times)
		r.TimeS = &s
	}
	rep.Optimum = sweep.Optimum(rep.Rows)
	return rep
}

// hyperfineFields are the fields hyperfine's BenchmarkResult serializes
// (src/benchmark/benchmark_result.rs; memory_usage_byte is optional
// there and not written here), with the JSON type of each.
var hyperfineFields = map[string]string{
	"command": "string", "mean": "number", "stddev": "number", "median": "number", "user": "number", "system": "number",
	"min": "number", "max": "number", "times": "[number]", "exit_codes": "[number]", "parameters": "{string}",
}

// jsonType is the type of a decoded JSON value, as in hyperfineFields.
func jsonType(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case nil:
		return "null"
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		return "[" + jsonType(x[0]) + "]"
	case map[string]any:
		for _, e := range x {
			return "{" + jsonType(e) + "}"
		}
		return "{}"
	}
	return fmt.Sprintf("%T", v)
}

// TestHyperfineExportGolden: the file is hyperfine's layout field by field
// — {"results": [...]}, each result with hyperfine's names and types, a
// time and an exit code per measurement, the one parameter a number in a
// string — and byte for byte the golden file.
func TestHyperfineExportGolden(t *testing.T) {
	rep := madeUpSpreadSweep(8)
	b := hyperfineBytes(t, rep)
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	results, _ := top["results"].([]any)
	if len(top) != 1 || len(results) != len(rep.Rows) {
		t.Fatalf("top level %v, %d results for %d rows", keys(top), len(results), len(rep.Rows))
	}
	for i, res := range results {
		m := res.(map[string]any)
		if !slices.Equal(keys(m), keys(hyperfineFields)) {
			t.Fatalf("result %d has fields %v, want hyperfine's %v", i, keys(m), keys(hyperfineFields))
		}
		for k, want := range hyperfineFields {
			if got := jsonType(m[k]); got != want {
				t.Errorf("result %d: %s is %s, want %s", i, k, got, want)
			}
		}
		times, codes := m["times"].([]any), m["exit_codes"].([]any)
		if len(times) != 3 || len(codes) != 3 {
			t.Errorf("result %d: %d times, %d exit codes, want 3 each", i, len(times), len(codes))
		}
		if p := m["parameters"].(map[string]any); p["sndbuf_effective_bytes"] != fmt.Sprint(rep.Rows[i].Effective) {
			t.Errorf("result %d: parameters %v, want the effective size %d", i, p, rep.Rows[i].Effective)
		}
		if mean, med := m["mean"].(float64), m["median"].(float64); med != rep.Rows[i].Seconds || mean < times[0].(float64) || mean > times[2].(float64) {
			t.Errorf("result %d: mean %v, median %v of %v", i, mean, med, times)
		}
	}
	checkGolden(t, "sweep.hyperfine.json", string(b))
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestHyperfineOneMeasurement: with one time per size σ is null, as
// hyperfine's stddev (an Option) is with one run; a size swept as
// "default" with no effective size known leaves the values as swept.
func TestHyperfineOneMeasurement(t *testing.T) {
	rep := reporttest.Sweep()
	rep.Rows[0].Effective = 0
	f, text := hyperfineOf(t, rep)
	r := f.Results[0]
	if r.Stddev != nil || len(r.Times) != 1 || r.Times[0] != rep.Rows[0].Seconds || r.Parameters["sndbuf"] != "default" || !strings.Contains(text, `"stddev": null`) {
		t.Errorf("one measurement: %+v", r)
	}
}

// hyperfineReader reads a file the way hyperfine's scripts do:
// plot_parametrized.py (the one parameter of each result, float() of its
// value; mean and stddev), plot_whisker.py and advanced_statistics.py
// (command, times, median), welch_ttest.py (two results' times). It
// prints what it read as JSON, or dies as those scripts do.
const hyperfineReader = `
import json, statistics, sys

def die(msg):
    sys.stderr.write(f"fatal: {msg}\n")
    sys.exit(1)

def unique_parameter(benchmark):
    params_dict = benchmark.get("parameters", {})
    if not params_dict:
        die("benchmarks must have exactly one parameter, but found none")
    if len(params_dict) > 1:
        die(f"benchmarks must have exactly one parameter, but found multiple: {sorted(params_dict)}")
    [(name, value)] = params_dict.items()
    return (name, float(value))

with open(sys.argv[1]) as f:
    results = json.load(f)["results"]
(names, values) = zip(*(unique_parameter(b) for b in results))
if len(frozenset(names)) != 1:
    die(f"benchmarks must all have the same parameter name, but found: {sorted(frozenset(names))}")
times_mean = [b["mean"] for b in results]
times_stddev = [b["stddev"] for b in results]
labels = [b["command"] for b in results]
times = [b["times"] for b in results]
medians = [b["median"] for b in results]
for b, ts in zip(results, times):
    if abs(statistics.mean(ts) - b["mean"]) > 1e-9 or abs(statistics.stdev(ts) - b["stddev"]) > 1e-9:
        die(f"{b['command']}: mean/stddev do not match its times")
    if abs(statistics.median(ts) - b["median"]) > 1e-9 or min(ts) != b["min"] or max(ts) != b["max"]:
        die(f"{b['command']}: median/min/max do not match its times")
X, Y = times[:2]
print(json.dumps({"parameter": names[0], "x": list(values), "mean": times_mean, "stddev": times_stddev,
                  "labels": labels, "runs": [len(ts) for ts in times], "medians": medians}))
`

// TestHyperfineScriptsRead runs hyperfineReader on the export: the file
// goes through plot_parametrized.py's parameter reading (a float per
// size, time against the buffer) and the other scripts' fields.
func TestHyperfineScriptsRead(t *testing.T) {
	py := testbin.Tool(t, "the check that hyperfine's scripts read the export needs it", "python3")
	rep := madeUpSpreadSweep(8)
	dir := t.TempDir()
	file, script := filepath.Join(dir, "h.json"), filepath.Join(dir, "reader.py")
	if err := os.WriteFile(file, hyperfineBytes(t, rep), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(hyperfineReader), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, script, file).CombinedOutput()
	if err != nil {
		t.Fatalf("the reader refused the file: %v\n%s", err, out)
	}
	var got struct {
		Parameter string
		X         []float64
		Runs      []int
		Labels    []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Parameter != "sndbuf_effective_bytes" || len(got.X) != len(rep.Rows) || got.X[2] != 2097152 || got.Runs[0] != 3 ||
		got.Labels[2] != "nbdscope load: 1 conn, 8×2m read, unix, sndbuf=1m" {
		t.Errorf("read %+v", got)
	}
}

// hyperfineBytes is rep's --export-hyperfine file.
func hyperfineBytes(t *testing.T, rep model.SweepReport) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := writeSweepHyperfine(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hyperfineOf is rep's --export-hyperfine file read back, and its text.
func hyperfineOf(t *testing.T, rep model.SweepReport) (hyperfineFile, string) {
	t.Helper()
	b := hyperfineBytes(t, rep)
	var f hyperfineFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f, string(b)
}

// An exec sweep's hyperfine file gave every size the same command
// ("nbdcopy {uri} null:" for default and for 2m), and hyperfine's
// scripts label each result by its command (plot_whisker.py's and
// plot_histogram.py's legends, welch_ttest.py's names): two boxes of
// one name. hyperfine's -L puts the parameter into each command; the
// buffer is not in the client's command line, so each names its size
// after it, as our load's description does.
func TestHyperfineExecCommandsNameTheirSize(t *testing.T) {
	rep := reporttest.Sweep()
	rep.Spec.Exec = &model.ExecSpec{Command: "nbdcopy {uri} null:"}
	f, text := hyperfineOf(t, rep)
	seen := map[string]bool{}
	for i, r := range f.Results {
		want := "nbdcopy {uri} null: (sndbuf=" + rep.Rows[i].Buffer + ")"
		if r.Command != want {
			t.Errorf("result %d: command %q, want %q", i, r.Command, want)
		}
		if seen[r.Command] {
			t.Errorf("result %d: command %q again", i, r.Command)
		}
		seen[r.Command] = true
	}
	if len(f.Results) < 2 || !strings.Contains(text, `"sndbuf_effective_bytes"`) {
		t.Fatalf("%d results; %s", len(f.Results), text)
	}
}
