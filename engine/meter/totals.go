package meter

import "nbdscope/model"

// Delta is what one span added to a side's counts: an interval between
// two readings, or a measurement of a fixed number of requests.
type Delta struct {
	Bytes          uint64
	Active         float64 // seconds the load ran
	Client, Server model.Counters
	Hist           []uint64
	Errors         uint64
	Unseen         bool  // the requests (and errors) are a real client's, not seen
	SrvUnknown     bool  // the server's counts are not attributed (spans.go): Server is zero
	MaxLat         int64 // ns: the longest request completed
	Fill           model.Fill
}

// Figures are the figures of a span, with CPU per busy second (the
// seconds its CPU readings cover: the load's active clock).
func (d Delta) Figures(busy float64, hasServer bool) model.Figures {
	return d.figures(busy, busy, hasServer)
}

// figures are the figures of a span, the client's CPU per clientBusy
// seconds and the server's per serverBusy.
func (d Delta) figures(clientBusy, serverBusy float64, hasServer bool) model.Figures {
	busy := clientBusy
	f := model.Figures{
		Seconds:       d.Active,
		Bytes:         d.Bytes,
		ThroughputBps: model.Throughput(d.Bytes, d.Active),
		Client:        model.ProcessFigures(d.Client, d.Bytes, busy),
		LatencyP50Ms:  model.Percentile(d.Hist, 50),
		LatencyP99Ms:  model.Percentile(d.Hist, 99),
		LatencyMaxMs:  latencyMs(d.MaxLat),
	}
	if !d.Unseen {
		errs := d.Errors
		f.Errors = &errs
	}
	f.SetFill(d.Fill)
	if hasServer {
		bytes, secs, unattributed := d.Bytes, d.Active, 0
		if d.SrvUnknown {
			bytes, secs, unattributed = 0, 0, 1
		}
		f.SetServerSpan(d.Server, bytes, secs, serverBusy, unattributed)
	}
	return f
}

// totals accumulate a side over a span of samples: the run, a segment, a
// turn. It is the meter's one accumulator: the summary, the segments and
// a turn's figures are all its figures.
type totals struct {
	bytes  uint64
	active float64
	client model.Counters
	server model.Counters
	hist   []uint64
	errors uint64
	seen   bool // some of the span's requests were ours, seen (not all a real client's)
	// consumed are the consume counts, added across load restarts.
	consumed model.ConsumeCounts
	maxLat   int64      // ns: the longest request of the span
	fill     model.Fill // the send-buffer fill, weighted by samples
	// srvBytes and srvActive are the payload and load seconds of the
	// samples whose server counts were attributed; srvUnattributed counts
	// the others (a shared --target's, both loads running: spans.go).
	srvBytes        uint64
	srvActive       float64
	srvUnattributed int
}

// add accumulates an interval; cores busy over a span are per second of
// load.
func (t *totals) add(d Delta) {
	t.bytes += d.Bytes
	t.active += d.Active
	t.client = t.client.Add(d.Client)
	t.server = t.server.Add(d.Server)
	if d.SrvUnknown {
		t.srvUnattributed++
	} else {
		t.srvBytes += d.Bytes
		t.srvActive += d.Active
	}
	t.hist = histAdd(t.hist, d.Hist)
	t.errors += d.Errors
	t.seen = t.seen || !d.Unseen
	t.maxLat = max(t.maxLat, d.MaxLat)
	t.fill = t.fill.Add(d.Fill)
}

// figures are the figures of a span's totals; the server's are over the
// samples whose server counts were attributed, with their payload.
func (t totals) figures(hasServer bool) model.Figures {
	f := Delta{Bytes: t.bytes, Active: t.active, Client: t.client,
		Hist: t.hist, Errors: t.errors, Unseen: !t.seen, MaxLat: t.maxLat, Fill: t.fill}.Figures(t.active, false)
	if hasServer {
		f.SetServerSpan(t.server, t.srvBytes, t.srvActive, t.srvActive, t.srvUnattributed)
	}
	return f
}

// consumedCounts are what the consume modes found over the span, nil
// where our load never ran in it (its requests all a real client's).
func (t totals) consumedCounts() *model.ConsumeCounts {
	if !t.seen {
		return nil
	}
	c := t.consumed
	return &c
}

// empty tells a span that has nothing yet.
func (t totals) empty() bool { return t.bytes == 0 && t.active == 0 }

// latencyMs is a longest request in ms; Unknown when none completed.
func latencyMs(ns int64) model.Figure {
	if ns <= 0 {
		return model.Unknown
	}
	return model.Figure(float64(ns) / 1e6)
}

func histAdd(a, b []uint64) []uint64 {
	if len(a) < len(b) {
		a = append(a, make([]uint64, len(b)-len(a))...)
	}
	for i := range b {
		a[i] += b[i]
	}
	return a
}

// ExecClient marks what an exec side's client figures cannot hold as
// unknown: its latency (the requests are the client's own), and its
// socket calls unless they were counted (counted: probe/syscount was
// allowed).
func ExecClient(exec, counted bool, f *model.Figures) {
	if !exec {
		return
	}
	f.LatencyP50Ms, f.LatencyP99Ms, f.LatencyMaxMs = model.Unknown, model.Unknown, model.Unknown
	if counted {
		return
	}
	c := &f.Client
	c.RecvCallsPer2MiB, c.SendCallsPer2MiB, c.RecvEAGAINPer2MiB, c.SendEAGAINPer2MiB, c.EAGAINPer2MiB =
		model.Unknown, model.Unknown, model.Unknown, model.Unknown, model.Unknown
}
