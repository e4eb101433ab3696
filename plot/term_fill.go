package plot

// The comparison's fill chart: how often the side's bulk sender found its
// send buffer full in run a and in run b (the sender waited on its
// reader), drawn when either run sampled it; runs saved before the fill
// was sampled, or made off Linux, get the two charts they always had.

// fillTermTitle is the fill chart's title.
const fillTermTitle = "send buffer full (% of fill samples: sender waited)"

// termRowsOf are the charts of a side in the comparison: the fill's only
// when a sample of either run has one.
func termRowsOf(sds [2]*side) []termRow {
	for _, sd := range sds {
		if sd == nil {
			continue
		}
		for _, s := range sd.samples {
			if s.Active && s.Fill().Known() {
				return termRows
			}
		}
	}
	var out []termRow
	for _, tr := range termRows {
		if tr.m != mFillFull {
			out = append(out, tr)
		}
	}
	return out
}
