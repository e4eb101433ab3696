package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"nbdscope/model"
)

// madeUpRun is a 2-second run of two sides, side B changing its send
// buffer at 1 s, with figures that are exact binary fractions (the same
// text on every machine).
func madeUpRun() model.Report {
	cfg := model.DefaultConfig()
	rep := model.Report{Version: model.ReportVersion, Nbdscope: "test", Time: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), Config: cfg}
	rep.Platform.OS, rep.Platform.Arch, rep.Platform.Kernel, rep.Platform.Cores = "linux", "amd64", "6.1.0", 2
	smp := func(t float64, side model.SideID, buf string, gib, recv float64) model.Sample {
		s := model.Sample{T: t, Side: side, Active: true, Connections: 1}
		s.Settings = model.StampOf(cfg.Sides[0])
		s.Settings.SndBuf = buf
		s.Seconds, s.Bytes = 0.5, uint64(gib*0.5*model.GiB)
		s.Errors = new(uint64) // our load's requests are seen: none failed
		s.ThroughputBps = model.Figure(gib * model.GiB)
		s.Client = model.Process{RecvCallsPer2MiB: model.Figure(recv), RecvEAGAINPer2MiB: 2, CoresBusy: 0.75,
			CoresOnCPU: 0.75, CoresWaiting: 0.0625, LeadWaiting: 0.03125, CoresAsleep: 7.1875, WaitSPer2MiB: 0.0001220703125}
		s.Server = &model.Process{SendCallsPer2MiB: 1, CoresBusy: 0.5, CoresOnCPU: 0.5, CoresWaiting: 0.25, LeadWaiting: 0.0625, CoresAsleep: 7.25, WaitSPer2MiB: 0.00048828125}
		s.SndBuf = model.Buffers{ServerRequested: buf, ServerEffective: map[string]int{"default": 212992, "2m": 4194304}[buf]}
		return s
	}
	rep.Samples = []model.Sample{
		smp(0.5, "A", "default", 1.5, 20), smp(0.5, "B", "default", 1.25, 22),
		smp(1, "A", "default", 1.75, 18), smp(1, "B", "default", 1.5, 21),
		smp(1.5, "A", "default", 1.5, 19), smp(1.5, "B", "2m", 3, 6),
		smp(2, "A", "default", 1.25, 20), smp(2, "B", "2m", 3.25, 5),
	}
	rep.Samples[5].Changed = true
	rep.Events = []model.Event{{T: 1.02, Side: "B", Setting: "sndbuf", From: "default", To: "2m"}}
	rep.Warnings = []model.Warning{{T: 0, Kind: model.WarnCores, Text: "this machine has 2 cores"}}
	whole := func(name string, gib float64, segs ...model.Segment) model.SideReport {
		var sm model.Summary
		sm.Settings = model.StampOf(cfg.Sides[0])
		sm.ThroughputBps, sm.Seconds, sm.Bytes = model.Figure(gib*model.GiB), 2, uint64(gib*2*model.GiB)
		sm.Errors, sm.Consumed = new(uint64), &model.ConsumeCounts{} // our load's
		sm.Changed = len(segs) > 1
		sp := model.SpreadOf(rep.Samples, model.SideID(name), nil)
		sm.Spread = &sp
		for i := range segs {
			g := &segs[i]
			gsp := model.SpreadOf(rep.Samples, model.SideID(name), func(s model.Sample) bool { return s.Settings == g.Settings && s.T > g.From && s.T <= g.To })
			g.Spread = &gsp
		}
		return model.SideReport{Name: name, Summary: sm, Segments: segs}
	}
	seg := func(from, to float64, buf string, gib float64) model.Segment {
		g := model.Segment{From: from, To: to}
		g.Settings = model.StampOf(cfg.Sides[0])
		g.Settings.SndBuf, g.ThroughputBps = buf, model.Figure(gib*model.GiB)
		g.Errors, g.Consumed = new(uint64), &model.ConsumeCounts{}
		return g
	}
	rep.Sides = []model.SideReport{whole("A", 1.5, seg(0, 2, "default", 1.5)), whole("B", 2.25, seg(0, 1, "default", 1.375), seg(1.5, 2, "2m", 3.125))}
	return rep
}

// TestRunExportsGolden: run's formats of one made-up run, as written to
// stdout or a file.
func TestRunExportsGolden(t *testing.T) {
	rep := madeUpRun()
	for _, c := range []struct{ format, golden string }{
		{fmtJSON, "run.json"}, {fmtCSV, "run.csv"}, {fmtMarkdown, "run.md"}, {fmtText, "run.txt"},
	} {
		var b bytes.Buffer
		if err := writeRunAs(c.format, &b, rep, "made-up"); err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
		checkGolden(t, c.golden, b.String())
	}
}

// TestIntervalLinesGolden: the interval lines of the made-up run's
// samples and change, as they would come.
func TestIntervalLinesGolden(t *testing.T) {
	rep := madeUpRun()
	var b bytes.Buffer
	p := newIntervalPrinter(&b, rep.Config.Interval, true) // -i given: a line per sample
	for i := range rep.Samples {
		p.update(model.Update{Sample: &rep.Samples[i]})
		if i == 3 {
			p.update(model.Update{Event: &rep.Events[0]})
		}
	}
	idle := model.Sample{T: 2.5, Side: "A"}
	p.update(model.Update{Sample: &idle})
	p.update(model.Update{Done: &model.Done{}}) // the idle stretch's line
	checkGolden(t, "run.intervals.txt", b.String())
	if !strings.Contains(b.String(), "[B]  1.50-2.00 s     3.25 GiB/s  recv 5.0/2MiB  EAGAIN 2.0  cpu 0.75/0.50  wait 0.06/0.25  sndbuf 2m (4m)\n") {
		t.Errorf("no line in the shape of iperf3's:\n%s", b.String())
	}
}

// writeRecorder records each write call.
type writeRecorder struct{ writes [][]byte }

func (w *writeRecorder) Write(p []byte) (int, error) {
	w.writes = append(w.writes, append([]byte(nil), p...))
	return len(p), nil
}

// TestJSONStreamLines: every object is one line, written with one write
// call, with its type first; the summary ends the stream without the
// samples, which came as lines.
func TestJSONStreamLines(t *testing.T) {
	rep := madeUpRun()
	rep.Partial, rep.PartialReason = true, "interrupted after 2.0s of 10s"
	rep.Crashes = []model.Crash{{T: 2, Side: "A", Role: "load", Status: "signal: killed"}}
	var w writeRecorder
	s := &jsonStream{w: &w}
	for i := range rep.Samples {
		s.update(model.Update{Sample: &rep.Samples[i]})
	}
	s.update(model.Update{Event: &rep.Events[0]})
	s.update(model.Update{Warning: &rep.Warnings[0]})
	s.update(model.Update{Crash: &rep.Crashes[0]})
	s.update(model.Update{Done: &model.Done{}}) // writes nothing
	if err := s.summary(rep); err != nil {
		t.Fatal(err)
	}
	var types []string
	for i, line := range w.writes {
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' || !bytes.HasPrefix(line, []byte(`{"type":"`)) {
			t.Fatalf("write %d is not one line starting with its type: %q", i, line)
		}
		var obj map[string]any
		if err := json.Unmarshal(line, &obj); err != nil {
			t.Fatalf("write %d: %v: %s", i, err, line)
		}
		types = append(types, obj["type"].(string))
		if obj["type"] == "summary" {
			if _, has := obj["samples"]; has || obj["partial"] != true || obj["samples_streamed"] != float64(len(rep.Samples)) || obj["sides"] == nil {
				t.Errorf("summary: %s", line)
			}
		}
		if obj["type"] == "sample" && (obj["side"] == nil || obj["throughput_bps"] == nil) {
			t.Errorf("a sample without its fields: %s", line)
		}
	}
	want := strings.Repeat("sample ", len(rep.Samples)) + "event warning crash summary"
	if strings.Join(types, " ") != want {
		t.Errorf("types %v, want %s", types, want)
	}
	sc := bufio.NewScanner(bytes.NewReader(bytes.Join(w.writes, nil)))
	n := 0
	for sc.Scan() {
		n++
	}
	if n != len(w.writes) {
		t.Errorf("%d lines in %d writes", n, len(w.writes))
	}
}
