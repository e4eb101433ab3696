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
	s.assumed = assumedPayload{export: size, moved: s.assumed.moved}
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
