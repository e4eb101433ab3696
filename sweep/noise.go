package sweep

import (
	"nbdscope/model"
	"nbdscope/stats"
)

// sweepMeasurement is a row of one measurement as a SweepMeasurement.
func sweepMeasurement(r model.SweepRow) model.SweepMeasurement {
	return model.SweepMeasurement{Seconds: r.Seconds, ClientUserS: r.ClientUserS, ClientSysS: r.ClientSysS, ThroughputBps: r.ThroughputBps}
}

// execMeasurement is an exec sweep's run as a SweepMeasurement.
func execMeasurement(run model.ExecRun) model.SweepMeasurement {
	return model.SweepMeasurement{Seconds: run.Seconds, ClientUserS: run.UserS, ClientSysS: run.SysS,
		ThroughputBps: model.Throughput(run.Payload.Total(), run.Seconds)}
}

// optimumNoise judges the optimum (rows[best]) against the other rows by
// the throughputs of their measurements (stats.Compare).
func optimumNoise(rows []model.SweepRow, best int) *model.OptimumNoise {
	top := rows[best].ThroughputStats()
	next := -1
	for i, r := range rows {
		if i != best && r.ThroughputBps.Known() && (next < 0 || r.ThroughputBps > rows[next].ThroughputBps) {
			next = i
		}
	}
	n := &model.OptimumNoise{Lead: model.Unknown, Noise: model.Unknown}
	if next < 0 {
		return n
	}
	n.RunnerUp = rows[next].Buffer
	v := stats.Compare(rows[next].ThroughputStats(), top)
	if !v.Known {
		return n
	}
	n.Known, n.Within, n.Lead, n.Noise = true, v.Within, model.Figure(v.Diff), model.Figure(v.Noise)
	if !n.Within {
		return n // a clear winner has no tie
	}
	for i, r := range rows {
		if i == best {
			n.Tied = append(n.Tied, r.Buffer)
		} else if w := stats.Compare(r.ThroughputStats(), top); w.Known && w.Within {
			n.Tied = append(n.Tied, r.Buffer)
		}
	}
	return n
}
