package plot

import (
	"fmt"
	"strings"

	"nbdscope/model"
	"nbdscope/phrase"
	"nbdscope/platform"
	"nbdscope/units"
)

// caption says where and how a run was made, and what the charts show:
// head (the platform, each side's buffers and placement), the numbered
// changes the markers refer to, and tail (the definitions of the
// figures). Lines are wrapped to the document's width.
type caption struct{ head, changes, tail []string }

func captionOf(rep *model.Report, sides []side) caption {
	var c caption
	c.head = append(c.head, "platform: "+platformText(rep.Platform))
	if e := rep.MacOS; e != nil {
		c.head = append(c.head, phrase.MacOSEmulation(*e))
	}
	for k, sd := range sides {
		c.head = append(c.head, fmt.Sprintf("side %s: %s; placement %s", sd.name, buffersText(rep, sd, k), placementText(rep, sd)))
	}
	changes := changesOf(rep)
	if len(changes) == 0 {
		c.changes = append(c.changes, "changes: none")
	}
	for _, e := range changes {
		who := "both sides"
		if e.Side != "" {
			who = "side " + string(e.Side)
		}
		c.changes = append(c.changes, fmt.Sprintf("change %d at %.2fs, %s: %s %s → %s", e.n, e.T, who, e.Setting, e.From, e.To))
	}
	c.changes = append(c.changes, execRunsText(rep, sides)...)
	for k, sd := range sides {
		if k < len(rep.Sides) {
			if r := rep.Sides[k].ReceiverChanged(); r != nil {
				why := phrase.ReasonLong(*r)
				c.changes = append(c.changes, fmt.Sprintf("side %s: %s: each point's receive calls and fill are its interval's receiver's and sender's; an interval across the change is a gap (its figures would mix two processes' calls)", sd.name, why))
			}
		}
	}
	c.tail = append(c.tail,
		"throughput: payload bytes completed per second. receive calls per 2 MiB: data-socket receive calls of the process that receives the bulk data "+
			"(the client for reads, the server for writes) per 2 MiB of payload. CPU: user+system seconds of each process per second its side's load ran. "+
			"Each point is a sample's end; a gap is time the side did not run (its turn in alternate mode, paused) or a figure that was not measured.")
	if len(rowsOf(rep)) == len(svgRows) { // the fill chart is drawn; its short title leaves out whose buffer
		c.tail = append(c.tail, "send buffer full / empty: the share of 100 Hz samples in which the bulk sender's send buffer "+
			"(the server's for reads, the client's for writes) held ≥ 90% / < 10% of its limit.")
	}
	c.head, c.changes, c.tail = wrapAll(c.head), wrapAll(c.changes), wrapAll(c.tail)
	return c
}

// captionLines are the caption's lines in one column.
func captionLines(rep *model.Report, sides []side) []string {
	c := captionOf(rep, sides)
	return append(append(append([]string(nil), c.head...), c.changes...), c.tail...)
}

func wrapAll(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, wrap(l, captionChars)...)
	}
	return out
}

// captionChars is about the characters of a caption line that fit the
// document's width at its font size.
const captionChars = 188

// wrap breaks text at blanks into lines of at most n characters (a longer
// word gets a line of its own); continuation lines are indented.
func wrap(text string, n int) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) > n:
			out = append(out, line)
			line = "    " + w
		default:
			line += " " + w
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

func platformText(pf platform.Facts) string {
	var parts []string
	if pf.OS != "" {
		parts = append(parts, pf.OS+"/"+pf.Arch)
	}
	if pf.Kernel != "" {
		parts = append(parts, pf.Kernel) // "Linux 6.1.0", "Darwin 23.4.0"
	}
	if pf.CPUModel != "" {
		parts = append(parts, pf.CPUModel)
	}
	if pf.Cores > 0 {
		parts = append(parts, fmt.Sprintf("%d cores", pf.Cores))
	}
	if pf.UnixSndbufDefault > 0 {
		parts = append(parts, "unix SO_SNDBUF default "+units.FormatSize(int64(pf.UnixSndbufDefault)))
	}
	if pf.UnixSndbufMax > 0 {
		parts = append(parts, "max "+units.FormatSize(int64(pf.UnixSndbufMax)))
	}
	if len(parts) == 0 {
		return "not recorded"
	}
	return strings.Join(parts, ", ")
}

// buffersText is a side's buffers at the start: requested, and effective
// as the first sample read them back.
func buffersText(rep *model.Report, sd side, k int) string {
	sc := rep.Config.Sides[k]
	var eff model.Buffers
	for _, s := range sd.samples {
		if s.SndBuf.ServerEffective > 0 || s.SndBuf.ClientEffective > 0 {
			eff = s.SndBuf
			break
		}
	}
	server := bufText(sc.SndBuf.String(), eff.ServerEffective)
	if sc.Target != "" {
		server = "external"
	}
	return fmt.Sprintf("server SO_SNDBUF %s, client SO_SNDBUF %s, client SO_RCVBUF %s (at the start)",
		server, bufText(sc.ClientSndBuf.String(), eff.ClientEffective), bufText(sc.ClientRcvBuf.String(), eff.ClientRcvEffective))
}

func bufText(req string, eff int) string {
	if eff > 0 {
		return req + " (eff. " + units.FormatSize(int64(eff)) + ")"
	}
	return req
}

// placementText is where a side's processes ran, from its summary.
func placementText(rep *model.Report, sd side) string {
	for _, s := range rep.Sides {
		if s.ID() == sd.id {
			p := s.Summary.Placement
			if p.Setting == "" {
				break
			}
			return fmt.Sprintf("%s (load CPUs %s, server CPUs %s)", p.Setting, p.LoadCPUs, p.ServerCPUs)
		}
	}
	return "not recorded"
}

// execRunsText is a line per exec side whose client finished runs: how
// many, and the shortest and longest.
func execRunsText(rep *model.Report, sides []side) []string {
	var out []string
	for _, sd := range sides {
		var secs []string
		for _, e := range rep.Events {
			if e.Setting == model.ExecRunEvent && e.Side == sd.id {
				secs = append(secs, e.To)
			}
		}
		if len(secs) > 0 {
			out = append(out, fmt.Sprintf("side %s: %d client runs finished (the first in %s, the last in %s)", sd.name, len(secs), secs[0], secs[len(secs)-1]))
		}
	}
	return out
}
