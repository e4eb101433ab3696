package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"nbdscope/model"
)

// sweepSmall is a sweep of our load small enough for a test: one
// connection, 2 × 256 KiB in flight (a round of 512 KiB), a 1 GiB export.
var sweepSmall = []string{"sweep", "--sndbuf", "default,1m", "--repeat", "2", "--interval", "100ms",
	"--size", "1g", "--request-size", "256k", "--in-flight", "2"}

// TestSweepMovesItsBytes: each measurement of `sweep --bytes 64m` moves
// 64 MiB exactly, not what the samples up to the next tick held, and its
// time is that of those bytes: the table, the CSV and the JSON say the same
// bytes, and in each the time and the throughput agree (bytes / time).
func TestSweepMovesItsBytes(t *testing.T) {
	inProcessSides(t)
	const want = 64 << 20
	args := append(append([]string(nil), sweepSmall...), "--bytes", "64m")

	code, out, errs := runApp(t, args...)
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "Moving 64 MiB per measurement") {
		t.Errorf("table header does not say 64 MiB:\n%s", out)
	}
	// | default (208k) | 0.035s | … | 1.79 | mean ± σ | min … max |: time
	// × GiB/s is 1/16 GiB, within the rounding of the two printed figures.
	rows := regexp.MustCompile(`(?m)^\| (\S+)(?: \([^)]*\))? \| ([\d.]+)s \|.*\| ([\d.]+) \|`+spreadCellsRE).FindAllStringSubmatch(out, -1)
	if len(rows) != 2 {
		t.Fatalf("table rows %v:\n%s", rows, out)
	}
	for _, m := range rows {
		s, _ := strconv.ParseFloat(m[2], 64)
		g, _ := strconv.ParseFloat(m[3], 64)
		lo, hi := math.Max(s-0.0005, 0)*math.Max(g-0.005, 0), (s+0.0005)*(g+0.005)
		if gib := float64(want) / model.GiB; gib < lo-1e-9 || gib > hi+1e-9 {
			t.Errorf("row %s: %.3fs at %.2f GiB/s is %.4f–%.4f GiB, want %.4f", m[1], s, g, lo, hi, gib)
		}
	}

	code, cout, errs := runApp(t, append(args, "--csv")...)
	if code != 0 {
		t.Fatalf("sweep --csv: exit %d\n%s", code, errs)
	}
	recs, err := csv.NewReader(strings.NewReader(cout)).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("csv: %v, %d records\n%s", err, len(recs), cout)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, r := range recs[1:] {
		bytes, _ := strconv.ParseUint(r[col["bytes"]], 10, 64)
		secs, _ := strconv.ParseFloat(r[col["seconds"]], 64)
		timeS, _ := strconv.ParseFloat(r[col["time_s"]], 64)
		bps, _ := strconv.ParseFloat(r[col["throughput_bps"]], 64)
		if bytes != want || secs <= 0 || math.Abs(timeS-secs) > 0.0005 || math.Abs(bps*secs-want) > 1e-6*want {
			t.Errorf("csv row %s: bytes %d, seconds %v, time_s %v, throughput %v: want %d bytes, time_s = seconds, throughput × seconds = bytes",
				r[0], bytes, secs, timeS, bps, want)
		}
	}

	code, jout, errs := runApp(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("sweep --json: exit %d\n%s", code, errs)
	}
	var rep model.SweepReport
	if err := json.Unmarshal([]byte(jout), &rep); err != nil || len(rep.Rows) != 2 {
		t.Fatalf("json: %v, %d rows\n%s", err, len(rep.Rows), jout)
	}
	for _, r := range rep.Rows {
		f := r.Figures
		if rep.Spec.Bytes != want || f.Bytes != want || r.Seconds != f.Seconds || r.Seconds <= 0 || r.Repeats != 2 ||
			math.Abs(float64(r.ThroughputBps)*r.Seconds-want) > 1e-6*want || r.ThroughputBps != f.ThroughputBps {
			t.Errorf("json row %s: spec bytes %d, bytes %d, seconds %v (figures %v), throughput %v, %d repeats",
				r.Buffer, rep.Spec.Bytes, f.Bytes, r.Seconds, f.Seconds, r.ThroughputBps, r.Repeats)
		}
	}
}

// TestSweepBytesBelowARound: a measurement smaller than one round of
// requests is refused with exit 2 before anything runs, naming the
// smallest that is taken; a size that is not whole requests is rounded up
// and says so.
func TestSweepBytesBelowARound(t *testing.T) {
	storeCmdHome(t)
	code, out, errs := runApp(t, append(append([]string(nil), sweepSmall...), "--bytes", "1k")...)
	if code != 2 || out != "" || !strings.Contains(errs, "--bytes 1k is less than one round of requests") ||
		!strings.Contains(errs, "1 connection × 2 in flight × 256k = 512k: want at least --bytes 512k") {
		t.Errorf("--bytes 1k: exit %d, stdout %q, stderr %q; want 2 naming 512k", code, out, errs)
	}
	a := testApp()
	var notes strings.Builder
	a.stderr = &notes
	cfg := model.DefaultConfig()
	sd := cfg.Sides[0]
	sd.RequestSize, sd.InFlight = 256<<10, 2
	spec := model.SweepSpec{Bytes: 1_000_000}
	if err := a.sweepBytes(&spec, sd); err != nil || spec.Bytes != 1<<20 || !strings.Contains(notes.String(), "rounded up to whole 256k requests: 1048576 (1m)") {
		t.Errorf("--bytes 1000000: %v, %d bytes, %q; want 1 MiB, rounded up and said", err, spec.Bytes, notes.String())
	}
}
