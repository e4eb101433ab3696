package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"regexp"
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
)

func TestExportMarkdown(t *testing.T) {
	rep := reporttest.Report()
	rep.Sides[0].Summary.SetFill(model.Fill{Samples: 100, FullPct: 61, EmptyPct: 37, Bytes: 5000, Limit: 8192})
	var b bytes.Buffer
	if err := RunMarkdown(&b, "demo", rep); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	t.Log("\n" + md)
	hdr := regexp.MustCompile(`(?m)^\| side +\| buffer size +\| +time \| +user \| +system \| +GiB/s \| syscalls per 2 MiB \| sndbuf full/empty % \|$`)
	if !hdr.MatchString(md) {
		t.Error("no summary header")
	}
	// time = seconds; user/system = client + server; GiB/s; receiver (client) calls.
	want := map[string][]string{
		"A": {"A", "default (eff. 208k)", "10.00", "0.75", "4.75", "1.40", "10.00", "61/37"},
		"B": {"B", "2m (eff. 4m)", "10.00", "0.38", "2.00", "2.79", "1.25", "n/a"},
	}
	for side, w := range want {
		if got := reporttest.TableRow(t, md, "side", side); strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("row %s: %q, want %q", side, got, w)
		}
	}
	for _, s := range []string{
		"# nbdscope run demo", "- preset: linux-gap", "- platform: linux/amd64, Linux 6.8.0, Test CPU @ 3.00GHz, 2 cores",
		"default 208k, max 416k", "net.core.wmem_max=212992", "## Events", "## Warnings", "sudo sysctl -w net.core.wmem_max=2097152",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q", s)
		}
	}
	if ev := reporttest.TableRow(t, md, "t (s)", "5.25"); strings.Join(ev, "|") != "5.25|A|connections|1|4" {
		t.Errorf("event row %q", ev)
	}

	// Writes: the buffer is the client's, the receiver the server;
	// unknown and external figures.
	r := reporttest.Report()
	r.Config.Sides[0].Workload = model.WorkWrite
	r.Sides[0].Summary.SndBuf.ClientRequested = "2m"
	r.Sides[0].Summary.SndBuf.ClientEffective = 4 << 20
	r.Sides[0].Summary.Server.RecvCallsPer2MiB = 3
	r.Sides[1].Summary.Server = nil
	r.Sides[1].Summary.ThroughputBps = model.Unknown
	r.Sides[1].Summary.Client.SysS = model.Unknown
	r.Sides[1].Summary.Seconds = 0
	b.Reset()
	if err := RunMarkdown(&b, "w", r); err != nil {
		t.Fatal(err)
	}
	md = b.String()
	if got := reporttest.TableRow(t, md, "side", "A"); got[1] != "2m (eff. 4m)" || got[6] != "3.00" {
		t.Errorf("write row %q", got)
	}
	if got := reporttest.TableRow(t, md, "side", "B"); strings.Join(got, "|") != "B|2m (eff. 4m)|n/a|0.25*|n/a*|n/a|1.25|n/a" {
		t.Errorf("external row %q", got)
	}
	if !strings.Contains(md, "client only") {
		t.Error("no note on client-only figures")
	}
}

func TestCompare(t *testing.T) {
	a := Run{Name: "base", Report: reporttest.Report()}
	b := Run{Name: "tuned", Report: reporttest.Report()}
	// b's A: 4.5e9 B/s (a: 1.5e9), 2.5 calls (a: 10), CPU 0.25+0.05 s/GiB (a: 0.375+0.2).
	sa := &b.Report.Sides[0].Summary
	sa.ThroughputBps = 4.5e9
	sa.Client.RecvCallsPer2MiB = 2.5
	sa.Client.CPUSPerGiB = 0.25
	srv := *sa.Server
	srv.CPUSPerGiB = 0.05
	sa.Server = &srv
	// b's B is unknown; b has a side C that a lacks.
	b.Report.Sides[1].Summary.ThroughputBps = model.Unknown
	b.Report.Sides = append(b.Report.Sides, model.SideReport{Name: "C", Summary: b.Report.Sides[0].Summary})

	var out bytes.Buffer
	if err := Compare(&out, a, b); err != nil {
		t.Fatal(err)
	}
	txt := out.String()
	t.Log("\n" + txt)
	rows := map[string][]string{}
	for _, l := range strings.Split(txt, "\n") {
		if strings.HasPrefix(l, "|") {
			c := reporttest.Cells(l)
			rows[c[0]+"/"+c[1]] = c
		}
	}
	for key, want := range map[string]string{
		"A/GiB/s":              "1.40|4.19|3.00x",
		"A/syscalls per 2 MiB": "10.00|2.50|0.25x",
		"A/CPU s/GiB":          "0.57|0.30|0.52x",
		"B/GiB/s":              "2.79|n/a|n/a",
		"B/syscalls per 2 MiB": "1.25|1.25|1.00x",
		"C/GiB/s":              "n/a|4.19|n/a",
	} {
		c := rows[key]
		if c == nil {
			t.Errorf("no row %s", key)
			continue
		}
		if got := strings.Join(c[2:], "|"); got != want {
			t.Errorf("%s: %s, want %s", key, got, want)
		}
	}
	if !strings.Contains(txt, "a: base (2025-03-04 05:06:07, preset linux-gap)") || !strings.Contains(txt, "b: tuned") {
		t.Error("no run names")
	}
	// The ratio itself.
	if r := model.Ratio(4, 1); r != 0.25 {
		t.Errorf("Ratio(4, 1) = %v", r)
	}
	if model.Ratio(0, 1).Known() || model.Ratio(model.Unknown, 1).Known() || model.Ratio(1, model.Figure(math.Inf(1))).Known() {
		t.Error("Ratio of unknowns is known")
	}
}

// TestPartialRunExports: a partial run's markdown, CSV and comparison all
// say it is partial, and why.
func TestPartialRunExports(t *testing.T) {
	rf, want := reporttest.Partial(), reporttest.Partial()
	var md bytes.Buffer
	if err := RunMarkdown(&md, "cut", rf); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"**partial run**: side A load died (exit status 1): target nbd+unix:///?socket=/tmp/q.sock: connection lost",
		"## Crashes", "2.50s side A load died (exit status 1)"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("markdown lacks %q:\n%s", w, md.String())
		}
	}

	var cb bytes.Buffer
	if err := model.WriteRunCSV(&cb, rf.WithStamps()); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cb).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("csv: %v %q", err, recs)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, rec := range recs[1:] {
		if rec[col["partial"]] != "true" || rec[col["partial_reason"]] != want.PartialReason {
			t.Fatalf("csv row %q: partial columns", rec)
		}
	}

	var cmp bytes.Buffer
	whole := Run{Name: "whole", Report: reporttest.Report()}
	if err := Compare(&cmp, whole, Run{Name: "cut", Report: rf}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmp.String(), "partial: side A load died") {
		t.Errorf("compare does not say b is partial:\n%s", cmp.String())
	}
}

// The markdown's setup of an exec side named our load's shape ("1 | 2m |
// 8") and not the client that was the load; now it names the client, and
// its shape is its own.
func TestExportMarkdownNamesExecClient(t *testing.T) {
	rep := reporttest.Report()
	rep.Config.Sides[1].Exec = "qemu-img convert -f raw -O raw {uri} null"
	var b bytes.Buffer
	if err := RunMarkdown(&b, "demo", rep); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if !strings.Contains(md, "its own") {
		t.Errorf("B's setup row does not say its shape is its client's own:\n%s", md)
	}
	if !strings.Contains(md, "- B's load: a real client, `qemu-img convert -f raw -O raw {uri} null`") {
		t.Errorf("the setup does not name B's client:\n%s", md)
	}
}
