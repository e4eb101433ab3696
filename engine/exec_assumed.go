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
	n := uint64(len(lm.ExecRuns)) * a.export
	if model.FlowOf(sc.Workload) == model.FlowWrite {
		a.moved.WriteBytes += n
	} else {
		a.moved.ReadBytes += n
	}
	moved := a.moved
	sm.Payload = &moved
}

// uncounted marks the figures of an assumed-payload side's sample (and its
// turn's and recent ones) that hold no finished run: the client is moving
// data nbdscope cannot count until its run ends, so the throughput is n/a,
// not the 0 B/s that the counted payload, none yet, would make of it. The
// PayloadAssumed warning says why. A real client against our server is
// counted live by the server, and a 0 there is a measurement.
func uncounted(sc model.SideConfig, smp *model.Sample) {
	if !assumesPayload(sc) {
		return
	}
	for _, f := range []*model.Figures{&smp.Figures, smp.Turn, smp.Recent} {
		if f != nil && f.Bytes == 0 {
			f.ThroughputBps = model.Unknown
		}
	}
}
