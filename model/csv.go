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

// contextColumns are the CSV's columns that are not figures of the
// table (the settings, the span's length, who received, the buffers, the
// errors), each list placed before the figure it names: the layout
// scripts have read since before the table.
var contextColumns = map[string][]csvColumn{
	"throughput_bps": {
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
	},
	"receiver_recv_calls_per_2mib": {{"receiver", func(f *Figures) string { return csvProcess(f.Direction().Receiver()) }}},
	"sender_send_calls_per_2mib":   {{"sender", func(f *Figures) string { return csvProcess(f.Direction().Sender()) }}},
	"latency_p50_ms": {
		{"server_sndbuf_effective", func(f *Figures) string { return csvInt(f.SndBuf.ServerEffective) }},
		{"client_sndbuf_effective", func(f *Figures) string { return csvInt(f.SndBuf.ClientEffective) }},
		{"client_rcvbuf_effective", func(f *Figures) string { return csvInt(f.SndBuf.ClientRcvEffective) }},
		{"server_rcvbuf_effective", func(f *Figures) string { return csvInt(f.SndBuf.ServerRcvEffective) }},
		{"sndbuf_clamped", func(f *Figures) string { return strconv.FormatBool(f.SndBuf.Clamped) }},
		{"load_cpus", func(f *Figures) string { return f.Placement.LoadCPUs }},
		{"server_cpus", func(f *Figures) string { return f.Placement.ServerCPUs }},
	},
	"sndbuf_full_pct": {{"errors", func(f *Figures) string {
		if f.Errors == nil {
			return "" // not seen (a real client's): empty, as an unknown figure
		}
		return strconv.FormatUint(*f.Errors, 10)
	}}},
}

// figureColumns are the columns every CSV of figures has, in order: the
// table of figures (figtable.go), each entry after the context columns
// placed before it. A new entry is a new column after the last.
var figureColumns = func() []csvColumn {
	var cols []csvColumn
	for _, e := range figureTable {
		if e.NoCSV {
			continue
		}
		cols = append(cols, contextColumns[e.Name()]...)
		cols = append(cols, csvColumn{e.Name(), func(f *Figures) string { return csvFigure(e.Get(f)) }})
	}
	return cols
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

// Run CSV columns around the figures: what each sample is, the run's
// partial flag on every row (a tool reading the samples sees they do not
// cover the whole run), and on a row whose side was at macOS's 8 KiB
// buffer off a Mac the kernel it ran on instead of XNU and the series'
// B/A from a real Mac (the run's MacOSEmulation), empty on any other.
var (
	RunCSVLead  = []string{"t", "side", "active", "open_connections"}
	RunCSVTrail = []string{"partial", "partial_reason", "macos_emulation", "macos_series_speedup"}
)

// RunCSVHeader is the header of a run's CSV.
func RunCSVHeader() []string {
	return append(append(append([]string{}, RunCSVLead...), FigureCSVHeader()...), RunCSVTrail...)
}

// WriteRunCSV writes one row per sample of a run (run --csv, runs export
// --format csv).
func WriteRunCSV(w io.Writer, rep Report) error {
	rep = rep.WithStamps()
	mac := rep.MacOS
	if mac == nil {
		mac = MacOSEmulationOf(rep)
	}
	rows := make([]CSVRow, len(rep.Samples))
	for i := range rep.Samples {
		s := &rep.Samples[i]
		rows[i] = CSVRow{
			Lead:    []string{units.CSVNumber(s.T), string(s.Side), strconv.FormatBool(s.Active), strconv.Itoa(s.Connections)},
			Figures: &s.Figures,
			Trail:   append([]string{strconv.FormatBool(rep.Partial), rep.PartialReason}, csvMacOS(mac, s.SndBuf)...),
		}
	}
	return WriteFiguresCSV(w, RunCSVLead, RunCSVTrail, rows)
}

// csvMacOS is a sample's macos_emulation and macos_series_speedup cells:
// filled where its side's send buffer (the server's or the client's) was
// macOS's in a run marked so.
func csvMacOS(e *MacOSEmulation, b Buffers) []string {
	macos := Buf{Kind: BufMacOS}.String()
	if e == nil || b.ServerRequested != macos && b.ClientRequested != macos {
		return []string{"", ""}
	}
	x := ""
	if e.SeriesSpeedup > 0 {
		x = units.CSVNumber(e.SeriesSpeedup)
	}
	return []string{e.Kernel, x}
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
