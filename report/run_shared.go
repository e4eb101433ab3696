package report

import (
	"fmt"
	"io"

	"nbdscope/model"
)

// printUnattributed says, per side, when its server figures leave out
// samples: one --target process served both sides, and in the samples in
// which both loads ran (concurrent mode; in alternate mode a turn switch
// that could not be read between the loads, engine/shared.go) its calls
// are neither side's. A user who counts the process with perf or strace
// finds A's and B's calls together below that, and this line says why.
func printUnattributed(w io.Writer, rep model.Report) {
	for _, s := range rep.Sides {
		f := s.Summary.Figures
		if f.ServerUnattributed == 0 {
			continue
		}
		if f.Server == nil {
			fmt.Fprintf(w, "server %s: n/a — the target's server serves both sides, and the other side's load ran in each of the %s in which %s's did (concurrent mode): its calls cannot be split between them; use --mode alternate\n",
				s.Name, countOf(f.ServerUnattributed, "sample"), s.Name)
			continue
		}
		b, secs := f.ServerBase()
		fmt.Fprintf(w, "server %s: over %s of %s (%.1f of %.1f s of load): the target's server serves both sides, and its calls in the %s in which both loads ran (a turn switch not read between them: a pause that did not drain, a failed read) are attributed to neither, so A's and B's together come below the process's own count (perf, strace)\n",
			s.Name, size(model.Figure(b)), size(model.Figure(f.Bytes)), secs, f.Seconds, countOf(f.ServerUnattributed, "sample"))
	}
}
