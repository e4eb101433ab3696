package ui

import "fmt"

// The fill chart (issue 24), the last that v reaches: per side, the share
// of the 100 Hz fill samples in which the bulk sender's send buffer was
// full (≥ 90% of its limit: the sender waited on its reader), and dashed
// the share it was empty (< 10%: the reader waited on the sender), per
// sample interval, on a fixed 0–100% scale so that a change's marker
// shows who started waiting on whom. A sample whose fill was not measured
// is a gap, never 0.
var chartFill = chartDef{"send-buffer fill", unitPct, pairedSeries(mFullPct, mEmptyPct)}

// fillChartTitle is the fill chart's title; short for a narrow terminal.
func fillChartTitle(short bool) string {
	if short {
		return "sndbuf full/empty (%)"
	}
	return "send buffer full ≥90% / empty <10% (% of the time, bulk sender)"
}

// pctScale is a share's axis: 0 to 100% in rows equal steps, labelled in
// whole percent (33, 67, 100), whatever the figures.
func pctScale(sc scale, rows int) scale {
	sc.step = 100 / float64(rows)
	sc.maxY = 100
	sc.dec = 0
	sc.labelW = len("100")
	return sc
}

// legendValue is a chart legend's figure: a share in whole percent,
// anything else to three significant digits.
func legendValue(u unitKind, v float64) string {
	if u == unitPct {
		return fmt.Sprintf("%.0f", v)
	}
	return sig(v)
}
