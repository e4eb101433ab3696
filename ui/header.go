package ui

import (
	"fmt"
	"strings"
	"time"

	"nbdscope/units"
)

// header is the top: the run (mode, preset, state, elapsed time) and the
// platform line that tells what this OS gives a unix socket.
type header struct {
	com      *common
	width    int
	height   int
	mode     string
	preset   string
	modified bool
	baseline string // "NAME (date)" of the baseline drawn, "" for none
	baseName string // its name alone, when the date does not fit
	state    string // running, finished, stopping…
	elapsed  time.Duration
	own      string // the controller's own CPU ("0.6%", "n/a"); "" until measured
	// macOS is the mark, longest form first, while a side runs at
	// macOS's buffer on this kernel (model.MacOSEmulationNow): a line of
	// its own under the first, for as long as it is in force.
	macOS []string
}

func (h *header) SetSize(w, hgt int) { h.width, h.height = w, hgt }

func (h *header) View() string {
	if h.width <= 0 || h.height <= 0 {
		return ""
	}
	st := h.com.styles
	left := st.Brand.Render("nbdscope") + "  " + st.Label.Render("mode ") + st.Badge.Render(h.mode)
	if h.preset != "" {
		p := h.preset
		if h.modified {
			p += "*"
		}
		left += "  " + st.Label.Render("preset ") + st.Value.Render(p)
	}
	state := h.state
	switch state {
	case "running":
		state = st.OK.Render("● " + state)
	case "finished":
		state = st.Dim.Render("■ " + state)
	default:
		state = st.Warn.Render(state)
	}
	right := state + "  " + st.Strong.Render(elapsedClock(h.elapsed))
	if h.own != "" {
		// As top lists itself: what the explorer takes from the cores
		// the pair runs on. Left out where it would clip the left side.
		own := st.Dim.Render("nbdscope "+h.own) + "  "
		if cellWidth(left)+1+cellWidth(own+right) <= h.width {
			right = own + right
		}
	}
	if h.baseline != "" {
		bl := "  " + st.Label.Render("baseline: ") + st.Value.Render(h.baseline)
		if cellWidth(left+bl)+1+cellWidth(right) > h.width && h.baseName != "" {
			bl = "  " + st.Label.Render("baseline: ") + st.Value.Render(h.baseName)
		}
		left += bl
	}
	lines := []string{spread(left, right, h.width)}
	if len(h.macOS) > 0 && h.height > len(lines) {
		lines = append(lines, clip(st.Warn.Render(fitted(h.macOS, h.width)), h.width))
	}
	if h.height > len(lines) {
		lines = append(lines, clip(st.Dim.Render(h.platformLine()), h.width))
	}
	return strings.Join(lines, "\n")
}

// fitted is the first of forms (longest first) that fits w columns, else
// the last.
func fitted(forms []string, w int) string {
	for _, f := range forms {
		if cellWidth(f) <= w {
			return f
		}
	}
	return forms[len(forms)-1]
}

// platformLine: "Linux 6.1.0 · 2 cores · unix SO_SNDBUF default 208k, max
// 416k (net.core.wmem_max 208k)": what this OS defaults to and allows. It
// picks the longest form that fits the width.
func (h *header) platformLine() string {
	f := h.com.facts
	kernel := f.Kernel
	if kernel == "" || kernel == "unknown" {
		kernel = f.OS
	}
	if kernel == "" {
		kernel = "unknown OS"
	}
	short, _, _ := strings.Cut(kernel, "-")
	cores := na + " cores"
	if f.Cores > 0 {
		cores = fmt.Sprintf("%d cores", f.Cores)
		if f.Cores == 1 {
			cores = "1 core"
		}
	}
	bufs := "unix SO_SNDBUF default " + effSize(f.UnixSndbufDefault) + ", max " + effSize(f.UnixSndbufMax)
	limit, limitVal := "", ""
	for _, name := range []string{"net.core.wmem_max", "kern.ipc.maxsockbuf"} {
		if v, ok := f.Limits[name]; ok {
			limit, limitVal = name, units.FormatSize(int64(v))
			break
		}
	}
	var forms []string
	if limit != "" {
		full := kernel + " · " + cores + " · " + bufs + " (" + limit + " " + limitVal + ")"
		if f.Doubles {
			forms = append(forms, full+" · the kernel doubles requests")
		}
		_, bare, _ := strings.Cut(limit, ".core.")
		forms = append(forms, full,
			short+" · "+cores+" · "+bufs+" ("+limit+" "+limitVal+")",
			short+" · "+cores+" · "+bufs+" ("+limit+")")
		if bare != "" {
			forms = append(forms, short+" · "+cores+" · "+bufs+" ("+bare+" "+limitVal+")")
		}
	} else {
		forms = append(forms, kernel+" · "+cores+" · "+bufs, short+" · "+cores+" · "+bufs)
	}
	for _, s := range forms {
		if cellWidth(s) <= h.width {
			return s
		}
	}
	return forms[len(forms)-1]
}
