package plot

import (
	"sort"
	"strconv"
	"strings"
)

// The change markers' labels. Every chart numbers its changes at the top
// of the dashed lines; the top chart also names a change ("3 transport
// unix→tcp") where that fits. Labels never overlap: each goes in the
// first of markerRows rows where its box is clear of every other label;
// a change whose number fits nowhere joins its left neighbour's label
// ("5–7"). The numbered list under the charts names every change.

const (
	markerFont = 11.0 // font size of the labels
	markerRows = 3    // rows of labels at the top of a plot area
	markerRowH = 14.0 // baseline to baseline: a label's box and a little
	markerPad  = 2.0  // clear space left and right of a label's text
	markerVPad = 1.0  // and above and below it
	markerDx   = 3.0  // gap between the dashed line and its label
)

// box is a rectangle in document coordinates.
type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(b box) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// mark is a change's marker on a chart: where its line is, its number and
// its name.
type mark struct {
	x    float64
	n    int
	name string // "sndbuf 2m→64k"
}

// markerLabel is a laid-out label: the changes it numbers, its text, its
// anchor point (x, baseline y) and text-anchor, and its box.
type markerLabel struct {
	nums   []int
	text   string
	x, y   float64
	anchor string
	box    box
}

// plotArea is the rectangle labels must stay within.
type plotArea struct{ x0, y0, w float64 }

// layoutMarkers lays out the labels of marks (in time order) in the plot
// area; named: try to give single changes their name as well.
func layoutMarkers(marks []mark, area plotArea, named bool) []markerLabel {
	groups := make([][]mark, 0, len(marks))
	for _, m := range sortedMarks(marks) {
		groups = append(groups, []mark{m})
	}
	var labels []markerLabel
	for {
		var failed int
		labels, failed = placeNumbers(groups, area)
		if failed < 0 || len(groups) == 1 {
			break
		}
		// Merge the label that found no room into its left neighbour.
		at := max(failed, 1)
		groups[at-1] = append(groups[at-1], groups[at]...)
		groups = append(groups[:at], groups[at+1:]...)
	}
	if named {
		nameWhereClear(labels, groups, area)
	}
	return labels
}

func sortedMarks(marks []mark) []mark {
	out := append([]mark(nil), marks...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].x < out[j].x })
	return out
}

// placeNumbers places each group's number label in the first row where it
// is clear; failed is the first group that fits in no row (-1: all fit).
// A lone group that fits nowhere (a plot narrower than its number) is
// placed in the first row all the same.
func placeNumbers(groups [][]mark, area plotArea) (labels []markerLabel, failed int) {
	for i, g := range groups {
		text := numbersText(g)
		l, ok := fit(g, text, area, labels, -1)
		if !ok {
			if len(groups) > 1 {
				return labels, i
			}
			l = place(g[0].x, text, 0, area)
		}
		l.nums = numsOf(g)
		labels = append(labels, l)
	}
	return labels, -1
}

// nameWhereClear gives each label of a single change its name where the
// longer label is clear of all the others, in any row.
func nameWhereClear(labels []markerLabel, groups [][]mark, area plotArea) {
	for i, g := range groups {
		if len(g) != 1 || g[0].name == "" {
			continue
		}
		if l, ok := fit(g, strconv.Itoa(g[0].n)+" "+g[0].name, area, labels, i); ok {
			l.nums = labels[i].nums
			labels[i] = l
		}
	}
}

// fit finds the first row where text, labelling group g, is clear of the
// placed labels (but skip) and within the plot area.
func fit(g []mark, text string, area plotArea, placed []markerLabel, skip int) (markerLabel, bool) {
	for row := 0; row < markerRows; row++ {
		l := place(g[0].x, text, row, area)
		if l.box.x0 < area.x0 || l.box.x1 > area.x0+area.w {
			continue
		}
		clear := true
		for j, p := range placed {
			if j != skip && l.box.overlaps(p.box) {
				clear = false
				break
			}
		}
		if clear {
			return l, true
		}
	}
	return markerLabel{}, false
}

// place puts text in a row beside the line at x: right of it, or left of
// it where it would run past the plot's right edge.
func place(x float64, text string, row int, area plotArea) markerLabel {
	w := textWidth(text, markerFont)
	y := area.y0 + 11 + float64(row)*markerRowH
	l := markerLabel{text: text, x: x + markerDx, y: y, anchor: "start"}
	if l.x+w > area.x0+area.w {
		l.x, l.anchor = x-markerDx, "end"
	}
	l.box = labelBox(l.x, y, w, l.anchor, markerFont)
	return l
}

// labelBox is the box of a text of width w at (x, baseline y): from the
// ascent to the descent, with the pads around; a row's boxes are less
// than markerRowH high, so rows never overlap one another.
func labelBox(x, y, w float64, anchor string, size float64) box {
	x0 := x
	if anchor == "end" {
		x0 = x - w
	}
	return box{x0 - markerPad, y - 0.8*size - markerVPad, x0 + w + markerPad, y + 0.25*size + markerVPad}
}

// numbersText names a group's changes: "4", "5–7" for a run of numbers,
// "3,5" otherwise.
func numbersText(g []mark) string {
	nums := numsOf(g)
	run := true
	for i := 1; i < len(nums); i++ {
		run = run && nums[i] == nums[i-1]+1
	}
	if len(nums) > 2 && run {
		return strconv.Itoa(nums[0]) + "–" + strconv.Itoa(nums[len(nums)-1])
	}
	parts := make([]string, len(nums))
	for i, n := range nums {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

func numsOf(g []mark) []int {
	out := make([]int, len(g))
	for i, m := range g {
		out[i] = m.n
	}
	sort.Ints(out)
	return out
}

// textWidth estimates the drawn width of text at a font size, from the
// advance widths of DejaVu Sans — the face librsvg and browsers fall back
// to on Linux, wider than Helvetica or Arial — so that labels laid out
// apart stay apart in any of them.
func textWidth(s string, size float64) float64 {
	em := 0.0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			em += 0.64
		case r == ' ' || r == '.' || r == ',' || r == ':' || r == ';' || r == '\'' || r == '|':
			em += 0.34
		case strings.ContainsRune("ijlft()[]-/", r):
			em += 0.42
		case r == 'm' || r == 'w' || r == 'M' || r == 'W':
			em += 1.0
		case r >= 'A' && r <= 'Z':
			em += 0.78
		case r == '→' || r == '–' || r == '×' || r == '—':
			em += 0.84
		default:
			em += 0.64
		}
	}
	return em * size
}
