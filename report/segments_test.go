package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"nbdscope/model"
)

// stretchSpec is one stretch of a made-up side: its settings and the
// effective server send buffer its samples read back.
type stretchSpec struct {
	sc  model.SideConfig
	eff int
}

// sideOf builds a side's samples (two a stretch, 1 s apart, each moving
// payload), segments (one a stretch) and a summary stamped with the last
// stretch's settings, as the engine writes them.
func sideOf(rep *model.Report, name string, specs ...stretchSpec) {
	sr := model.SideReport{Name: name}
	t := 0.0
	for _, sp := range specs {
		st := model.StampOf(sp.sc)
		var g model.Segment
		g.From, g.Settings = t, st
		g.SndBuf = model.Buffers{ServerRequested: st.SndBuf, ServerEffective: sp.eff}
		g.ThroughputBps = model.GiB
		for k := 0; k < 2; k++ {
			t++
			s := model.Sample{T: t, Side: model.SideID(name), Active: true}
			s.Settings, s.Bytes, s.Seconds = st, 1<<30, 1
			s.SndBuf = g.SndBuf
			rep.Samples = append(rep.Samples, s)
		}
		g.To = t
		sr.Segments = append(sr.Segments, g)
	}
	last := specs[len(specs)-1]
	sr.Summary.Settings = model.StampOf(last.sc)
	sr.Summary.SndBuf = model.Buffers{ServerRequested: sr.Summary.Settings.SndBuf, ServerEffective: last.eff}
	sr.Summary.Changed = len(specs) > 1
	rep.Sides = append(rep.Sides, sr)
}

func with(sc model.SideConfig, setting, value string) model.SideConfig {
	if err := sc.Set(setting, value); err != nil {
		panic(err)
	}
	return sc
}

// explorerRun is the run from the explorer: side A changed its
// client receive buffer, then its transport, then its placement, then its
// send buffer to macos at the very end; B ran unchanged with 2m.
func explorerRun() model.Report {
	var rep model.Report
	a := model.DefaultSide("A")
	rcv := with(a, model.SetClientRcvBuf, "256k")
	tcp := with(rcv, model.SetTransport, "tcp")
	shared := with(tcp, model.SetPlacement, string(model.PlaceShared))
	mac := with(shared, model.SetSndBuf, "macos")
	sideOf(&rep, "A", stretchSpec{a, 212992}, stretchSpec{rcv, 212992}, stretchSpec{tcp, 4 << 20},
		stretchSpec{shared, 4 << 20}, stretchSpec{mac, 8192})
	sideOf(&rep, "B", stretchSpec{with(model.DefaultSide("B"), model.SetSndBuf, "2m"), 4 << 20})
	return rep
}

// Every setting that differs between the rows gets a column, in the
// settings table's order; those that never change are named once; and no
// two rows of a side look alike in their setting cells.
func TestColumnsAreTheSettingsThatDiffer(t *testing.T) {
	tb, ok := Segments(explorerRun())
	if !ok {
		t.Fatal("a run with changes has no segments table")
	}
	want := []string{model.SetSndBuf, model.SetClientRcvBuf, model.SetPlacement, model.SetTransport}
	if !slices.Equal(tb.Settings, want) {
		t.Errorf("setting columns %v, want %v", tb.Settings, want)
	}
	if !slices.Equal(tb.Head[2:2+len(want)], want) {
		t.Errorf("head %v", tb.Head)
	}
	for _, s := range []string{"workload read", "connections 1", "request-size 2m", "in-flight 8", "client-sndbuf default"} {
		if !slices.Contains(tb.Same, s) {
			t.Errorf("the settings of every segment %v lack %q", tb.Same, s)
		}
	}
	for _, s := range tb.Same {
		if strings.HasPrefix(s, "read-percent") || strings.HasPrefix(s, "exec") {
			t.Errorf("%q does not apply to a read of our load", s)
		}
	}
	seen := map[string]bool{}
	for _, r := range tb.Rows {
		key := r[0] + "|" + strings.Join(r[2:2+len(want)], "|")
		if seen[key] {
			t.Errorf("two rows with the same settings %s:\n%v", key, tb.Rows)
		}
		seen[key] = true
	}
	if len(tb.Rows) != 6 || tb.Rows[2][0] != "A" || tb.Rows[2][5] != "tcp" || tb.Rows[5][0] != "B" || tb.Rows[5][2] != "2m" {
		t.Errorf("rows %v", tb.Rows)
	}
	var b bytes.Buffer
	if err := tb.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "in every segment: client-sndbuf default,") || !strings.Contains(b.String(), "transport") {
		t.Errorf("text:\n%s", b.String())
	}
}

// A change of any setting the stamp carries — derived from the settings
// table, not a list here — gives that setting, and only it, a column.
func TestEveryCarriedSettingGetsItsColumn(t *testing.T) {
	base := model.DefaultSide("A")
	base.Workload, base.ReadPercent = model.WorkMixed, 50
	n := 0
	for _, st := range model.Settings() {
		if _, carried := model.StampOf(base).Text(st.Name); !carried {
			continue
		}
		other, ok := changed(base, st)
		if !ok {
			t.Errorf("%s: found no other value to set", st.Name)
			continue
		}
		var rep model.Report
		sideOf(&rep, "A", stretchSpec{sc: base}, stretchSpec{sc: other})
		tb, _ := Segments(rep)
		want := []string{st.Name}
		if st.Name == model.SetWorkload {
			want = append(want, model.SetReadPercent) // 50 → "-": a read has no read share
		}
		if !slices.Equal(tb.Settings, want) {
			t.Errorf("a change of %s gives the columns %v", st.Name, tb.Settings)
		}
		n++
	}
	if n < 12 {
		t.Errorf("only %d settings are carried by the stamp", n)
	}
}

// changed returns sc with setting st at another value it accepts.
func changed(sc model.SideConfig, st *model.Setting) (model.SideConfig, bool) {
	cands := append(st.Values(), "3", "qemu-img info {uri}", "nbdkit -U {socket} -f null {size}")
	if st.Name == model.SetWorkload {
		cands = []string{string(model.WorkRead)}
	}
	for _, v := range cands {
		o := sc
		if o.Set(st.Name, v) == nil && o.Get(st.Name) != sc.Get(st.Name) {
			return o, true
		}
	}
	return sc, false
}

// A whole-run summary is labelled by the settings it was measured under,
// in time order, not by the one at its end (the issue: A read "macos",
// set in its last stretch).
func TestAcrossLabelsBySettingsMeasuredUnder(t *testing.T) {
	rep := explorerRun()
	buf := func(f model.Figures) string {
		return f.SndBuf.ServerRequested + " (eff. " + model.Figure(f.SndBuf.ServerEffective).Fixed(0) + ")"
	}
	if got, want := Across(rep, rep.Sides[0], buf), "default (eff. 212992) → default (eff. 4194304) → macos (eff. 8192)"; got != want {
		t.Errorf("A's label %q, want %q", got, want)
	}
	if got := Across(rep, rep.Sides[1], buf); got != "2m (eff. 4194304)" {
		t.Errorf("B's label %q", got)
	}
	want := []string{model.SetSndBuf, model.SetClientRcvBuf, model.SetPlacement, model.SetTransport}
	if got := ChangedSettings(rep, rep.Sides[0]); !slices.Equal(got, want) {
		t.Errorf("A changed %v, want %v", got, want)
	}
	if got := ChangedSettings(rep, rep.Sides[1]); len(got) != 0 {
		t.Errorf("B changed %v", got)
	}
	// A setting in force only while the side moved nothing is not what
	// it measured under.
	rep.Samples = slices.DeleteFunc(rep.Samples, func(s model.Sample) bool { return s.Side == "A" && s.Settings.SndBuf == "macos" })
	if got := Across(rep, rep.Sides[0], buf); strings.Contains(got, "macos") {
		t.Errorf("A's label %q names a setting it moved nothing under", got)
	}
	if _, ok := Segments(model.Report{Sides: []model.SideReport{{Name: "A", Segments: make([]model.Segment, 1)}}}); ok {
		t.Error("a run without changes has a segments table")
	}
}

// run's summary table labels a side's buffers and placement by what it
// moved data under, as runs show does: it gave only the last ("64k
// (128k)") for a side that ran at 2m first, beside figures of both.
func TestSummaryTableLabelsAcrossChanges(t *testing.T) {
	rep := explorerRun()
	var text strings.Builder
	Summary(&text, rep)
	row := lastLineStarting(text.String(), "server SO_SNDBUF (eff.)")
	if !strings.Contains(row, "default (208k) → default (4m) → macos (8k)") {
		t.Errorf("A's buffer row %q, want every setting it moved data under, in time order", row)
	}
}
