package sweep

import "nbdscope/model"

// sweepMeasurement is a row of one measurement as a SweepMeasurement.
func sweepMeasurement(r model.SweepRow) model.SweepMeasurement {
	return model.SweepMeasurement{Seconds: r.Seconds, ClientUserS: r.ClientUserS, ClientSysS: r.ClientSysS, ThroughputBps: r.ThroughputBps}
}

// execMeasurement is an exec sweep's run as a SweepMeasurement.
func execMeasurement(run model.ExecRun) model.SweepMeasurement {
	return model.SweepMeasurement{Seconds: run.Seconds, ClientUserS: run.UserS, ClientSysS: run.SysS,
		ThroughputBps: model.Throughput(run.Payload.Total(), run.Seconds)}
}
