package engine

import (
	"context"
	"fmt"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
)

// A real client against a real server (a side with both exec and server):
// neither end's bytes can be counted on a unix socket, so, as the exec
// sweep does (model.ExecRun's PayloadAssumed), each client run that
// finishes is taken to have moved the export once, the way the side's
// workload goes. The side's payload, throughput and per-2-MiB figures are
// that payload's; a warning says so on screen and in every output.

// assumedPayload is an exec side's payload taken from its finished runs.
type assumedPayload struct {
	export uint64      // the export's size; 0: not this kind of side, or unknown
	moved  nbd.Payload // the runs' so far, the way the workload goes
	fitted bool        // the side's size is model.RealPairSize in place of the default
	// runs and active are the runs that ended since the last sample and
	// their running seconds (a poll folded into the next sample adds its
	// own to them).
	runs   int
	active float64
}

// fitExport is the side's configuration to start with: a real client
// against a real server at the default export (64 GiB, whose first run
// outlasts a run of nbdscope, so nothing is counted) serves
// model.RealPairSize, set in the side's configuration so that every output
// says so; a side that is no longer such a pair gets the default back. A
// size given is left as it is. The caller holds s.change.
func (s *side) fitExport() model.SideConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := &s.cfg
	switch {
	case sc.RealPairExport() != sc.Size:
		sc.Size, s.assumed.fitted = sc.RealPairExport(), true
	case s.assumed.fitted && !assumesPayload(*sc):
		sc.Size, s.assumed.fitted = model.DefaultSize, false
	}
	return *sc
}

// assumesPayload tells whether a side configured as sc has its payload
// assumed: a real client and a real server, both of ours to run.
func assumesPayload(sc model.SideConfig) bool { return sc.Exec != "" && sc.Server != "" }

// probeExport asks the side's real server for its export's size, before
// the client runs (a server that takes one client at a time must not find
// this probe's connection in its way). The caller holds s.change.
func (s *side) probeExport(sc model.SideConfig, uri string) {
	if !assumesPayload(sc) {
		return
	}
	size, err := exportSizeAt(uri)
	s.mu.Lock()
	s.assumed.export = size
	s.mu.Unlock()
	what := model.PayloadAssumed{Command: sc.Exec, Export: int64(size)}
	if err != nil {
		what.Err = err.Error()
	}
	s.p.raise(model.Warn(s.id, what))
}

// exportSizeAt is the size of the export at uri, as a client sees it.
func exportSizeAt(uri string) (uint64, error) {
	u, err := nbd.ParseURI(uri)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), nbd.DefaultHandshakeTimeout)
	defer cancel()
	c, err := nbd.Dial(ctx, u, nbd.ClientOptions{})
	if err != nil {
		return 0, fmt.Errorf("asking the server for the export's size: %w", err)
	}
	defer c.Close()
	return c.Info().Size, nil
}

// assumePayload gives a poll of a real server (which counts no payload)
// the payload of the client runs that finished since the last (lm), one
// export each. Other sides' polls are left as they are. s.mu is not held.
func (s *side) assumePayload(sc model.SideConfig, lm wire.Msg, sm *wire.Msg) {
	if !assumesPayload(sc) || sm.Payload != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &s.assumed
	if a.export == 0 {
		return // unknown: the figures stay n/a
	}
	a.runs += len(lm.ExecRunsActive)
	for _, secs := range lm.ExecRunsActive {
		a.active += secs
	}
	n := uint64(len(lm.ExecRuns)) * a.export
	if model.FlowOf(sc.Workload) == model.FlowWrite {
		a.moved.WriteBytes += n
	} else {
		a.moved.ReadBytes += n
	}
	moved := a.moved
	sm.Payload = &moved
}

// assumedRate gives an assumed-payload side's sample its throughput.
// While no run has ended in it, the client is moving data nbdscope cannot
// count until its run ends: n/a, not the 0 B/s that the counted payload,
// none yet, makes of it (its turn's and recent figures too, while they
// hold no run). A sample in which runs ended holds their payload, moved
// over the runs' own time, not the sample's: 1 GiB counted in a 0.27 s
// sample read 3.7 GiB/s for runs of 0.75 s. Its throughput is those runs'
// exports over their running time (paused time left out: alternate turns
// stop the client), as the sweep times a run. The PayloadAssumed warning
// says so. A real client against our server is counted live by the
// server, and a 0 there is a measurement. s.mu is not held.
func (s *side) assumedRate(sc model.SideConfig, smp *model.Sample) {
	if !assumesPayload(sc) {
		s.mu.Lock()
		if s.meter.Settled() {
			s.meter.Settle() // counted as it moves again (e back to our load)
		}
		s.mu.Unlock()
		return
	}
	for _, f := range []*model.Figures{&smp.Figures, smp.Turn, smp.Recent} {
		if f != nil && f.Bytes == 0 {
			f.ThroughputBps = model.Unknown
		}
	}
	s.mu.Lock()
	a := &s.assumed
	runs, secs, export := a.runs, a.active, a.export
	a.runs, a.active = 0, 0
	s.mu.Unlock()
	if runs > 0 {
		s.mu.Lock()
		s.meter.Settle() // the summary ends with the last finished run
		s.mu.Unlock()
	}
	switch {
	case smp.Bytes == 0:
	case runs > 0 && secs > 0:
		smp.ThroughputBps = model.Figure(float64(uint64(runs)*export) / secs)
	default: // runs whose running time was not said: none to divide by
		smp.ThroughputBps = model.Unknown
	}
}
