package servestats

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"nbdscope/model"
)

// SummaryVersion is the schema version of the --stats-json file.
const SummaryVersion = 1

// Summary is the whole run of the server: each connection seen and the
// total, since the reporter started. The table and the JSON are written
// from it.
type Summary struct {
	Version     int           `json:"version"`
	Nbdscope    string        `json:"nbdscope_version"` // the build, as every JSON output carries
	Seconds     float64       `json:"seconds"`
	Connections []ConnFigures `json:"connections"`
	Total       Totals        `json:"total"`
}

// ConnFigures is one connection's figures over its life.
type ConnFigures struct {
	ID            uint64        `json:"id"`
	Export        string        `json:"export"`
	Open          bool          `json:"open"`
	ReadBytes     uint64        `json:"read_bytes"`  // READ data sent
	WriteBytes    uint64        `json:"write_bytes"` // WRITE data received
	Seconds       float64       `json:"seconds"`     // accepted to closed (or now)
	ThroughputBps model.Figure  `json:"throughput_bps"`
	Server        model.Process `json:"server"` // its socket's calls; CPU and wake-ups are the process's (total)
}

// Totals is the server process over the whole run.
type Totals struct {
	Accepted uint64 `json:"accepted"`
	// Refused: connections closed at once because the limit
	// (--max-connections) were open.
	Refused       uint64        `json:"refused"`
	ReadBytes     uint64        `json:"read_bytes"`
	WriteBytes    uint64        `json:"write_bytes"`
	ThroughputBps model.Figure  `json:"throughput_bps"`
	Server        model.Process `json:"server"`
}

// Summary is the run so far (it does not disturb the interval reports).
func (r *Reporter) Summary() Summary {
	now := r.now()
	wall := now.Sub(r.start).Seconds()
	s := Summary{Version: SummaryVersion, Nbdscope: model.Version, Seconds: wall}
	for _, ci := range r.src.Conns() {
		if c := r.conns[ci.ID]; c != nil && c.end.IsZero() {
			c.info = ci
		}
	}
	for _, id := range r.order {
		c := r.conns[id]
		end := c.end
		if end.IsZero() {
			end = now
		}
		secs := end.Sub(c.info.Since).Seconds()
		pl := c.info.Payload.Total()
		p := model.ProcessFigures(model.Counters{IO: c.info.IO}, pl, secs)
		p.UserS, p.SysS, p.CoresBusy, p.CPUSPerGiB = model.Unknown, model.Unknown, model.Unknown, model.Unknown
		p.VolCSPer2MiB, p.InvolCSPer2MiB, p.FaultsPer2MiB = model.Unknown, model.Unknown, model.Unknown
		s.Connections = append(s.Connections, ConnFigures{ID: id, Export: c.info.Export, Open: c.end.IsZero(),
			ReadBytes: c.info.Payload.ReadBytes, WriteBytes: c.info.Payload.WriteBytes, Seconds: secs,
			ThroughputBps: model.Throughput(pl, secs), Server: p})
	}
	st := r.src.Stats()
	d := r.self().Sub(r.firstSelf)
	d.IO = st.IO.Sub(r.firstTotal.IO)
	pl := st.Payload.Sub(r.firstTotal.Payload)
	s.Total = Totals{Accepted: st.Accepted - r.firstTotal.Accepted, Refused: st.Refused - r.firstTotal.Refused, ReadBytes: pl.ReadBytes, WriteBytes: pl.WriteBytes,
		ThroughputBps: model.Throughput(pl.Total(), wall), Server: model.ProcessFigures(d, pl.Total(), wall)}
	return s
}

// WriteTable writes the summary as a table.
func WriteTable(w io.Writer, s Summary) {
	fmt.Fprintf(w, "nbdscope serve: summary over %.1fs\n", s.Seconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "conn\tstate\tread bytes\twrite bytes\tGiB/s\tsend/2MiB\trecv/2MiB\tsend EAGAIN/2MiB\trecv EAGAIN/2MiB\twake-ups/2MiB\tfaults/2MiB\tCPU s\t")
	row := func(name, state string, rd, wr uint64, bps model.Figure, p model.Process) {
		wake, faults, cpu := "-", "-", "-"
		if p.VolCSPer2MiB.Known() {
			wake = p.VolCSPer2MiB.Fixed(2) + "+" + p.InvolCSPer2MiB.Fixed(2)
		}
		if p.FaultsPer2MiB.Known() {
			faults = p.FaultsPer2MiB.Fixed(2)
		}
		if p.UserS.Known() {
			cpu = fmt.Sprintf("%.3f", float64(p.UserS+p.SysS))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, state, rd, wr, gib(bps),
			p.SendCallsPer2MiB.Fixed(2), p.RecvCallsPer2MiB.Fixed(2), p.SendEAGAINPer2MiB.Fixed(2), p.RecvEAGAINPer2MiB.Fixed(2), wake, faults, cpu)
	}
	for _, c := range s.Connections {
		row(fmt.Sprint(c.ID), map[bool]string{true: "open", false: "closed"}[c.Open], c.ReadBytes, c.WriteBytes, c.ThroughputBps, c.Server)
	}
	state := fmt.Sprintf("%d conns", s.Total.Accepted)
	if s.Total.Refused > 0 {
		state += fmt.Sprintf(", %d refused", s.Total.Refused)
	}
	row("total", state, s.Total.ReadBytes, s.Total.WriteBytes, s.Total.ThroughputBps, s.Total.Server)
	tw.Flush()
}

// WriteJSON writes the summary as JSON.
func WriteJSON(w io.Writer, s Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
