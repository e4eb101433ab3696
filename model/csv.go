package model

import (
	"encoding/csv"
	"io"
	"nbdscope/units"
	"strconv"
)

// This file is nbdscope's one CSV layout: `run --csv`, `runs export
// --format csv` and `sweep --csv` all write the figure columns below from
// the same Figures, so the same data has the same columns everywhere.
// Unknown figures are empty cells, never 0. docs/cli.md lists the columns.

// csvColumn is one figure column: its header and its cell of a span.
type csvColumn struct {
	name string
	cell func(f *Figures) string
}

// processColumns are the columns of one process ("client" or "server").
func processColumns(who string) []csvColumn {
	proc := func(f *Figures) *Process { return f.process(who) }
	col := func(name string, get func(p *Process) Figure) csvColumn {
		return csvColumn{who + "_" + name, func(f *Figures) string {
			if p := proc(f); p != nil {
				return csvFigure(get(p))
			}
			return ""
		}}
	}
	return []csvColumn{
		col("recv_calls_per_2mib", func(p *Process) Figure { return p.RecvCallsPer2MiB }),
		col("send_calls_per_2mib", func(p *Process) Figure { return p.SendCallsPer2MiB }),
		col("recv_eagain_per_2mib", func(p *Process) Figure { return p.RecvEAGAINPer2MiB }),
		col("send_eagain_per_2mib", func(p *Process) Figure { return p.SendEAGAINPer2MiB }),
		col("voluntary_cs_per_2mib", func(p *Process) Figure { return p.VolCSPer2MiB }),
		col("involuntary_cs_per_2mib", func(p *Process) Figure { return p.InvolCSPer2MiB }),
		col("minor_faults_per_2mib", func(p *Process) Figure { return p.FaultsPer2MiB }),
		col("user_s", func(p *Process) Figure { return p.UserS }),
		col("sys_s", func(p *Process) Figure { return p.SysS }),
		col("cores_busy", func(p *Process) Figure { return p.CoresBusy }),
		col("cpu_s_per_gib", func(p *Process) Figure { return p.CPUSPerGiB }),
		col("cores_on_cpu", func(p *Process) Figure { return p.CoresOnCPU }),
		col("cores_waiting_for_cpu", func(p *Process) Figure { return p.CoresWaiting }),
		col("cores_asleep", func(p *Process) Figure { return p.CoresAsleep }),
		col("wait_for_cpu_s_per_2mib", func(p *Process) Figure { return p.WaitSPer2MiB }),
	}
}

// figureColumns are the columns every CSV of figures has, in order.
var figureColumns = func() []csvColumn {
	cols := []csvColumn{
		{"workload", func(f *Figures) string { return string(f.Settings.Workload) }},
		{"sndbuf", func(f *Figures) string { return f.Settings.SndBuf }},
		{"client_sndbuf", func(f *Figures) string { return f.Settings.ClientSndBuf }},
		{"client_rcvbuf", func(f *Figures) string { return f.Settings.ClientRcvBuf }},
		{"server_rcvbuf", func(f *Figures) string { v, _ := f.Settings.Text(SetServerRcvBuf); return v }},
		{"connections", func(f *Figures) string { return csvInt(f.Settings.Connections) }},
		{"request_size", func(f *Figures) string { return csvInt(f.Settings.RequestSize) }},
		{"in_flight", func(f *Figures) string { return csvInt(f.Settings.InFlight) }},
		{"placement", func(f *Figures) string { return string(f.Settings.Placement) }},
		{"consume", func(f *Figures) string { return string(f.Settings.Consume) }},
		{"settings_changed", func(f *Figures) string { return strconv.FormatBool(f.Changed) }},
		{"seconds", func(f *Figures) string { return units.CSVNumber(f.Seconds) }},
		{"bytes", func(f *Figures) string { return strconv.FormatUint(f.Bytes, 10) }},
		{"throughput_bps", func(f *Figures) string { return csvFigure(f.ThroughputBps) }},
		{"receiver", func(f *Figures) string { return csvProcess(f.Direction().Receiver()) }},
		{"receiver_recv_calls_per_2mib", func(f *Figures) string { return csvFigure(f.ReceiverCallsPer2MiB()) }},
		{"sender", func(f *Figures) string { return csvProcess(f.Direction().Sender()) }},
		{"sender_send_calls_per_2mib", func(f *Figures) string { return csvFigure(f.SenderCallsPer2MiB()) }},
		{"sender_send_eagain_per_2mib", func(f *Figures) string { return csvFigure(f.SenderEAGAINPer2MiB()) }},
	}
	cols = append(cols, processColumns("client")...)
	cols = append(cols, processColumns("server")...)
	return append(cols,
		csvColumn{"server_sndbuf_effective", func(f *Figures) string { return csvInt(f.SndBuf.ServerEffective) }},
		csvColumn{"client_sndbuf_effective", func(f *Figures) string { return csvInt(f.SndBuf.ClientEffective) }},
		csvColumn{"client_rcvbuf_effective", func(f *Figures) string { return csvInt(f.SndBuf.ClientRcvEffective) }},
		csvColumn{"server_rcvbuf_effective", func(f *Figures) string { return csvInt(f.SndBuf.ServerRcvEffective) }},
		csvColumn{"sndbuf_clamped", func(f *Figures) string { return strconv.FormatBool(f.SndBuf.Clamped) }},
		csvColumn{"load_cpus", func(f *Figures) string { return f.Placement.LoadCPUs }},
		csvColumn{"server_cpus", func(f *Figures) string { return f.Placement.ServerCPUs }},
		csvColumn{"latency_p50_ms", func(f *Figures) string { return csvFigure(f.LatencyP50Ms) }},
		csvColumn{"latency_p99_ms", func(f *Figures) string { return csvFigure(f.LatencyP99Ms) }},
		csvColumn{"latency_max_ms", func(f *Figures) string { return csvFigure(f.LatencyMaxMs) }},
		csvColumn{"errors", func(f *Figures) string {
			if f.Errors == nil {
				return "" // not seen (a real client's): empty, as an unknown figure
			}
			return strconv.FormatUint(*f.Errors, 10)
		}},
		csvColumn{"sndbuf_full_pct", func(f *Figures) string { return csvFigure(f.Fill().FullPct) }},
		csvColumn{"sndbuf_empty_pct", func(f *Figures) string { return csvFigure(f.Fill().EmptyPct) }},
		csvColumn{"sndbuf_fill_bytes", func(f *Figures) string { return csvFigure(f.Fill().Bytes) }},
	)
}()

// FigureCSVHeader is the header of the figure columns.
func FigureCSVHeader() []string {
	h := make([]string, len(figureColumns))
	for i, c := range figureColumns {
		h[i] = c.name
	}
	return h
}

// FigureCSVCells are a span's cells of the figure columns.
func FigureCSVCells(f *Figures) []string {
	row := make([]string, len(figureColumns))
	for i, c := range figureColumns {
		row[i] = c.cell(f)
	}
	return row
}

// CSVRow is one row of a figures CSV: leading cells (what the row is: a
// sample's time and side, a sweep's buffer), the figures, trailing cells.
type CSVRow struct {
	Lead    []string
	Figures *Figures
	Trail   []string
}

// WriteFiguresCSV writes a CSV: the header (lead, figure columns, trail)
// and the rows.
func WriteFiguresCSV(w io.Writer, lead, trail []string, rows []CSVRow) error {
	cw := csv.NewWriter(w)
	head := append(append(append([]string{}, lead...), FigureCSVHeader()...), trail...)
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range rows {
		rec := append(append(append([]string{}, r.Lead...), FigureCSVCells(r.Figures)...), r.Trail...)
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Run CSV columns around the figures: what each sample is, and the run's
// partial flag on every row (a tool reading the samples sees they do not
// cover the whole run).
var (
	RunCSVLead  = []string{"t", "side", "active", "open_connections"}
	RunCSVTrail = []string{"partial", "partial_reason"}
)

// RunCSVHeader is the header of a run's CSV.
func RunCSVHeader() []string {
	return append(append(append([]string{}, RunCSVLead...), FigureCSVHeader()...), RunCSVTrail...)
}

// WriteRunCSV writes one row per sample of a run (run --csv, runs export
// --format csv).
func WriteRunCSV(w io.Writer, rep Report) error {
	rep = rep.WithStamps()
	rows := make([]CSVRow, len(rep.Samples))
	for i := range rep.Samples {
		s := &rep.Samples[i]
		rows[i] = CSVRow{
			Lead:    []string{units.CSVNumber(s.T), string(s.Side), strconv.FormatBool(s.Active), strconv.Itoa(s.Connections)},
			Figures: &s.Figures,
			Trail:   []string{strconv.FormatBool(rep.Partial), rep.PartialReason},
		}
	}
	return WriteFiguresCSV(w, RunCSVLead, RunCSVTrail, rows)
}

// csvProcess is the receiver's or sender's cell: "changed" where it
// changed within the span (its figures' cells are then empty).
func csvProcess(name string) string {
	if name == "" {
		return string(FlowChanged)
	}
	return name
}

// csvFigure is a figure's cell: empty when unknown.
func csvFigure(f Figure) string {
	if !f.Known() {
		return ""
	}
	return units.CSVNumber(float64(f))
}

// csvInt is a count or size cell: empty when unknown (0).
func csvInt(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}
