package plot

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"

	"nbdscope/model"
)

// manyChanges is the fixture with 34 more changes, as a user stepping
// keys in the explorer makes them: A's send buffer every 0.2 s, a burst of
// B's settings at one instant, a pair-wide mode change, and three changes
// of A in the run's last 0.1 s (their labels must go left of the lines).
func manyChanges() model.Report {
	rep := fixture()
	var ev []model.Event
	bufs := model.BufLadder
	for i := 0; i < 15; i++ {
		ev = append(ev, model.Event{T: 0.5 + 0.2*float64(i), Side: "A", Setting: "sndbuf", From: bufs[i%len(bufs)], To: bufs[(i+1)%len(bufs)]})
	}
	for i, s := range []string{"transport", "client-rcvbuf", "placement", "connections", "in-flight", "request-size", "workload", "consume"} {
		ev = append(ev, model.Event{T: 4 + 0.001*float64(i), Side: "B", Setting: s, From: "x", To: "y"})
	}
	ev = append(ev, model.Event{T: 4.5, Side: "", Setting: "mode", From: "alternate", To: "concurrent"})
	for i := 0; i < 7; i++ {
		ev = append(ev, model.Event{T: 5 + 0.3*float64(i), Side: "B", Setting: "sndbuf", From: "default", To: "4k"})
	}
	for i := 0; i < 3; i++ {
		ev = append(ev, model.Event{T: 7.9 + 0.05*float64(i), Side: "A", Setting: "transport", From: "unix", To: "tcp"})
	}
	rep.Events = ev
	return rep
}

// drawnBox is the box of a marker-label as drawn: from its x, y and
// text-anchor, with the width the layout assumes for its text.
func drawnBox(t *testing.T, l node) box {
	t.Helper()
	return labelBox(num(t, l.attr("x")), num(t, l.attr("y")), textWidth(l.text(), markerFont), l.attr("text-anchor"), markerFont)
}

// The SVG with many changes: in every chart no two marker labels overlap,
// each lies within its plot area, and each change is numbered exactly
// once; the top chart still names a change wherever there is room. Before
// the layout, labels went in rows by their index and ran into each other
// ("1 sndb4 sndbuf 4k→defau13 transpo19…").
func TestSVGMarkerLabelsNeverOverlap(t *testing.T) {
	rep := manyChanges()
	root := parseSVG(t, SVG("many", rep))
	named := 0
	for _, c := range root.all("g", "chart") {
		where := c.attr("data-side") + "/" + c.attr("data-figure")
		labels := c.all("text", "marker-label")
		var boxes []box
		seen := map[string]int{}
		for _, l := range labels {
			b := drawnBox(t, l)
			for j, o := range boxes {
				if b.overlaps(o) {
					t.Errorf("%s: label %q overlaps label %q", where, l.text(), labels[j].text())
				}
			}
			boxes = append(boxes, b)
			for _, n := range strings.Split(l.attr("data-changes"), ",") {
				seen[n]++
			}
			if strings.Contains(l.text(), " ") {
				named++
			}
		}
		for _, m := range c.all("g", "marker") {
			if n := m.attr("data-change"); seen[n] != 1 {
				t.Errorf("%s: change %s is numbered %d times", where, n, seen[n])
			}
		}
		if len(seen) != len(c.all("g", "marker")) {
			t.Errorf("%s: labels number %d changes, the chart has %d markers", where, len(seen), len(c.all("g", "marker")))
		}
	}
	if named < 6 {
		t.Errorf("the top charts name only %d changes", named)
	}
}

// layoutMarkers on random marks, bunched and spread, over plot areas
// narrow and wide: no two labels overlap, all stay in the area, every
// change is numbered once.
func TestLayoutMarkersProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	for trial := 0; trial < 300; trial++ {
		area := plotArea{x0: 50, y0: 100, w: float64(120 + rng.Intn(600))}
		n := 1 + rng.Intn(45)
		var marks []mark
		for i := 0; i < n; i++ {
			x := area.x0 + rng.Float64()*area.w
			if rng.Intn(3) == 0 && i > 0 {
				x = marks[i-1].x + rng.Float64()*3 // a burst
			}
			x = min(x, area.x0+area.w)
			marks = append(marks, mark{x: x, n: i + 1, name: fmt.Sprintf("sndbuf %dk→%dk", rng.Intn(4096), rng.Intn(4096))})
		}
		labels := layoutMarkers(marks, area, trial%2 == 0)
		var nums []int
		for i, l := range labels {
			nums = append(nums, l.nums...)
			if l.box.x0 < area.x0-markerPad || l.box.x1 > area.x0+area.w+markerPad || l.box.y1 > area.y0+11+markerRows*markerRowH {
				t.Fatalf("trial %d: label %q at %+v leaves the area %+v", trial, l.text, l.box, area)
			}
			for _, o := range labels[:i] {
				if l.box.overlaps(o.box) {
					t.Fatalf("trial %d: %q overlaps %q", trial, l.text, o.text)
				}
			}
			if want := labelBox(l.x, l.y, textWidth(l.text, markerFont), l.anchor, markerFont); want != l.box {
				t.Fatalf("trial %d: %q's box %+v is not where it is drawn %+v", trial, l.text, l.box, want)
			}
		}
		slices.Sort(nums)
		for i, v := range nums {
			if v != i+1 {
				t.Fatalf("trial %d: the labels number %v, want 1…%d once each", trial, nums, n)
			}
		}
	}
}

// A burst too dense for three rows reads as one label of its numbers.
func TestLayoutMarkersMergesABurst(t *testing.T) {
	var marks []mark
	for i := 1; i <= 8; i++ {
		marks = append(marks, mark{x: 300, n: i})
	}
	labels := layoutMarkers(marks, plotArea{x0: 50, y0: 0, w: 500}, false)
	var texts []string
	for _, l := range labels {
		texts = append(texts, l.text)
	}
	if strings.Join(texts, " ") != "1 2 3–8" {
		t.Errorf("labels %q, want 1, 2 and 3–8", texts)
	}
	if got := numbersText([]mark{{n: 3}, {n: 5}}); got != "3,5" {
		t.Errorf("numbers %q", got)
	}
	if w := textWidth(strconv.Itoa(12345), 10); w < 30 || w > 40 {
		t.Errorf("five digits at 10px: %.1f px wide", w)
	}
}

// A finished client run of an exec side is not a change: the SVG drew
// each as a numbered marker ("change 1 at 1.52s, side B: exec.run →
// 0.186s"), seven of them over a 4 s run. Changes are numbered without
// them, and the caption counts the runs on one line.
func TestSVGExecRunsAreNotChanges(t *testing.T) {
	rep := fixture()
	rep.Events = []model.Event{
		{T: 1, Side: "B", Setting: model.ExecRunEvent, To: "0.186s"},
		{T: 2, Side: "B", Setting: "sndbuf", From: "default", To: "2m"},
		{T: 3, Side: "B", Setting: model.ExecRunEvent, To: "0.211s"},
	}
	doc := SVG("r", rep)
	if strings.Contains(doc, "exec.run") {
		t.Error("the SVG names exec.run events as changes")
	}
	if !strings.Contains(doc, "change 1 at 2.00s, side B: sndbuf default → 2m") {
		t.Error("the one change is not change 1")
	}
	if !strings.Contains(doc, "side B: 2 client runs finished") {
		t.Error("the caption does not count the client's runs")
	}
}

// An exec side's head names its client, not our load's settings: it
// said "read, unix, 1 conn × 2m, 8 in flight" over a qemu-img run.
func TestSVGExecSideHeadNamesTheClient(t *testing.T) {
	rep := fixture()
	rep.Config.Sides[1].Exec = "qemu-img convert -f raw -O raw {uri} null"
	root := parseSVG(t, SVG("r", rep))
	heads := root.all("text", "side-head")
	if len(heads) != 2 {
		t.Fatalf("%d side heads, want 2", len(heads))
	}
	if got := heads[1].text(); !strings.Contains(got, "qemu-img") || strings.Contains(got, "in flight") {
		t.Errorf("exec side's head %q, want its client named and no load settings", got)
	}
	if got := heads[0].text(); !strings.Contains(got, "in flight") {
		t.Errorf("our load's head %q, want its settings", got)
	}
}
