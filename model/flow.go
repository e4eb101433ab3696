package model

import (
	"nbdscope/stats"
)

// Which way a span's bulk data went, and so which process received it:
// what "the receiver" of every headline figure is. Our load's direction is
// its workload's; a real client's (an exec side) is what its server saw
// it do, whatever the side's workload setting says. A span across a
// change of direction has no one receiver: its receiver figures would mix
// two processes' calls (the client's receive calls of a read with those
// of its replies to a write), so they are n/a, while each process's own
// figures still add up.

// Flow is the direction of a span's bulk data.
type Flow string

const (
	// FlowRead: from the server to the client (reads; mixed counts as
	// reads: the headline stays the client's receive calls).
	FlowRead Flow = "read"
	// FlowWrite: from the client to the server.
	FlowWrite Flow = "write"
	// FlowChanged: one way, then the other, within the span.
	FlowChanged Flow = "changed"
)

// FlowOf is the direction of workload's bulk data.
func FlowOf(workload Workload) Flow {
	if IsWrite(workload) {
		return FlowWrite
	}
	return FlowRead
}

// FlowOfPayload is the direction of a real client's bulk data from what
// its server saw: a write when it received more payload than it sent
// (sweep's execWrites too); "" when it moved none.
func FlowOfPayload(readBytes, writeBytes uint64) Flow {
	switch {
	case readBytes == 0 && writeBytes == 0:
		return ""
	case writeBytes > readBytes:
		return FlowWrite
	}
	return FlowRead
}

// Join is the direction of two spans together: either's when the other's
// is not known (""), FlowChanged when they differ.
func (fl Flow) Join(o Flow) Flow {
	switch {
	case fl == "":
		return o
	case o == "" || o == fl:
		return fl
	}
	return FlowChanged
}

// Receiver names the process that received the bulk data; "" when it
// changed.
func (fl Flow) Receiver() string {
	switch fl {
	case FlowChanged:
		return ""
	case FlowWrite:
		return "server"
	}
	return "client"
}

// Sender names the process that sent the bulk data; "" when it changed.
func (fl Flow) Sender() string {
	switch fl {
	case FlowChanged:
		return ""
	case FlowWrite:
		return "client"
	}
	return "server"
}

// Workload is a workload whose bulk data goes this way, for what is named
// by workload (the sender's buffers, the fill's words); "" when it
// changed.
func (fl Flow) Workload() Workload {
	switch fl {
	case FlowChanged:
		return ""
	case FlowWrite:
		return WorkWrite
	}
	return WorkRead
}

// Direction is which way the span's bulk data went: its Flow as measured,
// else (our load; a run saved before flows were kept) its workload's.
func (f *Figures) Direction() Flow {
	if f.Flow != "" {
		return f.Flow
	}
	return FlowOf(f.Settings.Workload)
}

// ReceiverName names the process that received the span's bulk data,
// model.NA when the receiver changed within it.
func (f *Figures) ReceiverName() string { return orNA(f.Direction().Receiver()) }

// SenderName names the process that sent it, model.NA when it changed.
func (f *Figures) SenderName() string { return orNA(f.Direction().Sender()) }

// ReceiverNA is why the span's receiver and sender figures are n/a
// although both processes were measured: the receiver changed within it,
// and the segments have each stretch's own; nil when they are not for
// that reason.
func (f *Figures) ReceiverNA() *Reason {
	if f.Direction() == FlowChanged {
		return &Reason{Kind: ReasonReceiverChanged}
	}
	return nil
}

func orNA(s string) string {
	if s == "" {
		return NA
	}
	return s
}

// SettleFlows gives each sample, segment and summary of the report the
// direction of its bulk data, from the samples: an interval in which our
// load's workload changed direction mixed the two (FlowChanged); a
// segment goes the way its samples went; a side's whole run too, or
// FlowChanged when its segments went both ways, which takes away its
// fill and its spread of receive calls (two buffers', two processes').
// It is what the engine does before it hands out a report and what
// reading one does, so that runs saved before it read truthfully too.
// Calling it again changes nothing.
func (r *Report) SettleFlows() {
	last := map[SideID]Flow{}
	for i := range r.Samples {
		s := &r.Samples[i]
		last[s.Side] = s.SettleFlow(last[s.Side])
	}
	for i := range r.Sides {
		r.Sides[i].settleFlows(r.Samples)
	}
}

// SettleFlow marks a sample whose interval our load's workload changed
// direction in (FlowChanged: its receiver figures and fill are n/a), from
// prev, the direction of the side's last sample that moved payload (""
// before any), and returns the direction the side's next sample is to be
// judged against. The engine calls it on each live sample, SettleFlows on
// a report's.
func (s *Sample) SettleFlow(prev Flow) Flow {
	end := s.Direction() // our load's: its workload's at the interval's end
	if end == FlowChanged {
		end = FlowOf(s.Settings.Workload) // settled before: where it ended
	}
	if s.Flow == "" && s.Changed && prev != "" && prev != end {
		s.Flow = FlowChanged
	}
	if s.Flow == FlowChanged {
		s.SetFill(NoFill)
	}
	if s.Bytes == 0 {
		return prev
	}
	return end
}

// unlessWorkload is fl as a span keeps it: "" where its workload says it
// (Direction reads it back), so that a run saved before flows were kept
// reads and saves back byte for byte.
func unlessWorkload(fl Flow, wl Workload) Flow {
	if fl == FlowOf(wl) {
		return ""
	}
	return fl
}

// ReceiverChanged is why the side's whole-run receiver figures (its
// receiver's calls and EAGAIN, its sender's calls and buffer fill) are
// n/a: the receiver changed, with the receivers in order (Receivers:
// client, server, client); nil when they are not.
func (sd SideReport) ReceiverChanged() *Reason {
	why := sd.Summary.ReceiverNA()
	if why == nil {
		return nil
	}
	var order []string
	for _, g := range sd.Segments {
		if r := g.Direction().Receiver(); r != "" && (len(order) == 0 || order[len(order)-1] != r) {
			order = append(order, r)
		}
	}
	if len(order) > 1 {
		why.Receivers = order
	}
	return why
}

// settleFlows gives the side's segments and summary their direction.
func (sd *SideReport) settleFlows(samples []Sample) {
	id := sd.ID()
	whole := sd.Summary.Flow
	for j := range sd.Segments {
		g := &sd.Segments[j]
		fl := g.Flow
		for _, s := range samples {
			if s.Side == id && s.Bytes > 0 && !s.Changed && s.Settings == g.Settings && s.T > g.From && s.T <= g.To+1e-9 {
				fl = fl.Join(s.Direction())
			}
		}
		if fl == "" && g.Bytes > 0 {
			fl = g.Direction() // no samples of it (a report without them): its workload's
		}
		if fl != "" { // a stretch that moved nothing went no way
			g.Flow = unlessWorkload(fl, g.Settings.Workload)
			whole = whole.Join(fl)
		}
	}
	for _, s := range samples {
		if s.Side == id && s.Bytes > 0 {
			whole = whole.Join(s.Direction())
		}
	}
	if whole == "" {
		return
	}
	sd.Summary.Flow = unlessWorkload(whole, sd.Summary.Settings.Workload)
	if whole == FlowChanged {
		sd.Summary.SetFill(NoFill)
		if sd.Summary.Spread != nil {
			sp := *sd.Summary.Spread
			sp.RecvCallsPer2MiB = stats.Of(nil)
			sd.Summary.Spread = &sp
		}
	}
}
