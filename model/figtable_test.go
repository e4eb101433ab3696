package model

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// tableFigures is a span in which every figure of the table has a value
// of its own, so that an accessor reading the wrong field shows.
func tableFigures() Figures {
	n := 1.0
	next := func() Figure { n++; return Figure(n) }
	proc := func() *Process {
		p := Process{}
		v := reflect.ValueOf(&p).Elem()
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).Type() == reflect.TypeOf(Figure(0)) {
				v.Field(i).Set(reflect.ValueOf(next()))
			}
		}
		return &p
	}
	errs := uint64(0)
	f := Figures{Settings: Stamp{Workload: WorkRead}, Seconds: 2, Bytes: 4 << 20, ThroughputBps: next(),
		Client: *proc(), Server: proc(), LatencyP50Ms: next(), LatencyP99Ms: next(), LatencyMaxMs: next(), Errors: &errs}
	f.SetFill(Fill{Samples: 10, FullPct: next(), EmptyPct: next(), Bytes: next(), Limit: 1 << 20})
	return f
}

// TestFigureTableIsTheCSVHeader: the CSV's figure columns are the table's
// names in its order, and every other column is a context column, so a
// new entry is a new column with nothing else to write.
func TestFigureTableIsTheCSVHeader(t *testing.T) {
	var names []string
	for _, e := range FigureTable() {
		if !e.NoCSV {
			names = append(names, e.Name())
		}
	}
	context := map[string]bool{}
	for _, cols := range contextColumns {
		for _, c := range cols {
			context[c.name] = true
		}
	}
	var figures []string
	for _, h := range FigureCSVHeader() {
		if !context[h] {
			figures = append(figures, h)
		}
	}
	if !slices.Equal(figures, names) {
		t.Fatalf("CSV figure columns\n%v\nare not the table's names\n%v", figures, names)
	}
	for anchor := range contextColumns {
		if _, ok := LookupFigure(anchor); !ok {
			t.Errorf("context columns placed before %q, which is no entry of the table: they are not written", anchor)
		}
	}
}

// TestFigureTableCSVCellsAreTheEntries: each figure column's cell is the
// entry's own figure, in the CSV a run writes.
func TestFigureTableCSVCellsAreTheEntries(t *testing.T) {
	f := tableFigures()
	var buf bytes.Buffer
	if err := WriteFiguresCSV(&buf, nil, nil, []CSVRow{{Figures: &f}}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("CSV: %v, %d records", err, len(recs))
	}
	for _, e := range FigureTable() {
		i := slices.Index(recs[0], e.Name())
		if e.NoCSV {
			if i >= 0 {
				t.Errorf("%s: a CSV column, though kept out of the CSV", e.Name())
			}
			continue
		}
		if i < 0 {
			t.Errorf("%s: no CSV column", e.Name())
			continue
		}
		if want := csvFigure(e.Get(&f)); recs[1][i] != want || want == "" {
			t.Errorf("%s: cell %q, the entry reads %q", e.Name(), recs[1][i], want)
		}
	}
}

// TestFigureTableNamesAreJSONKeys: every entry's key is the JSON key of
// the field it reads (of the span for the side's figures, of the process
// for the others), and the value there is the one Get reads.
func TestFigureTableNamesAreJSONKeys(t *testing.T) {
	f := tableFigures()
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, e := range FigureTable() {
		obj := doc
		switch e.Of {
		case OfClient, OfServer:
			obj, _ = doc[string(e.Of)].(map[string]any)
		case OfReceiver:
			obj, _ = doc[f.Direction().Receiver()].(map[string]any)
		case OfSender:
			obj, _ = doc[f.Direction().Sender()].(map[string]any)
		}
		v, ok := obj[e.Key].(float64)
		if !ok {
			t.Errorf("%s: %q is no JSON number of the %q object", e.Name(), e.Key, e.Of)
			continue
		}
		if got := e.Get(&f); float64(got) != v {
			t.Errorf("%s: Get reads %v, its JSON key holds %v", e.Name(), got, v)
		}
	}
}

// TestFigureTableEntriesAreWhole: every entry has its labels and unit,
// names are unique, and a process's figure is unknown, not 0, with no
// process.
func TestFigureTableEntriesAreWhole(t *testing.T) {
	seen := map[string]bool{}
	none := Figures{Client: Process{}, Server: nil}
	for _, e := range FigureTable() {
		if e.Short == "" || e.Long == "" || e.Unit == "" || e.Get == nil {
			t.Errorf("%s: missing short or long label, unit or accessor: %+v", e.Name(), e)
		}
		if seen[e.Name()] {
			t.Errorf("%s: twice in the table", e.Name())
		}
		seen[e.Name()] = true
		if e.Of != OfSide && e.Of != OfClient && !strings.HasPrefix(e.Long, string(e.Of)+" ") {
			t.Errorf("%s: long label %q does not name its process", e.Name(), e.Long)
		}
		if e.Of == OfServer && (e.Get(&none).Known() || e.Unknown == "") {
			t.Errorf("%s: with no server it reads %v, reason %q", e.Name(), e.Get(&none), e.Unknown)
		}
	}
}

// TestSummaryFiguresPairTheProcesses: the summary shows every entry it
// marks once, and a group's client rows come before its server rows.
func TestSummaryFiguresPairTheProcesses(t *testing.T) {
	rows := SummaryFigures()
	var want int
	for _, e := range figureTable {
		if e.Summary != SummaryNone {
			want++
		}
	}
	if len(rows) != want {
		t.Fatalf("%d summary rows, %d entries shown in the summary", len(rows), want)
	}
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if a.Of == OfServer && b.Of == OfClient && a.Group == b.Group {
			t.Errorf("%s after %s: a group's client rows come first", b.Name(), a.Name())
		}
	}
}

// TestFigNamesAreInTheTable: every name the printers pick an entry by is
// an entry of the table (FigureOf would print n/a for it).
func TestFigNamesAreInTheTable(t *testing.T) {
	for _, n := range []string{FigThroughput, FigReceiverCalls, FigReceiverAgain, FigSenderCalls, FigClientCores,
		FigServerCores, FigClientWake, FigServerWake, FigFullPct, FigEmptyPct, FigP50, FigP99,
		FigSenderAgain, FigClientPerGiB, FigServerPerGiB, FigClientFaults, FigServerFaults} {
		if _, ok := LookupFigure(n); !ok {
			t.Errorf("%s: not in the table of figures", n)
		}
	}
}

// notInTable are the figure fields no entry reads, and why.
var notInTable = map[string]string{
	"eagain_per_2mib": "both directions' EAGAIN summed, kept in Process's JSON for readers of report version 1 only",
}

// TestEveryFigureFieldIsInTheTable: a figure field of Figures or Process
// (a Figure or a MaybeFigure, by its JSON key) is read by an entry of the
// table, so a figure added to the structs is not printed by the JSON
// alone. A new one is an entry in figtable.go (processFigures for a
// process's), or a line in notInTable saying why not.
func TestEveryFigureFieldIsInTheTable(t *testing.T) {
	keys := map[Owner]map[string]bool{OfSide: {}, OfClient: {}}
	for _, e := range FigureTable() {
		of := e.Of
		if of != OfSide {
			of = OfClient // every process's figures are the client's and the server's alike
		}
		keys[of][e.Key] = true
	}
	for of, typ := range map[Owner]reflect.Type{OfSide: reflect.TypeOf(Figures{}), OfClient: reflect.TypeOf(Process{})} {
		for i := 0; i < typ.NumField(); i++ {
			fd := typ.Field(i)
			if fd.Type != reflect.TypeOf(Figure(0)) && fd.Type != reflect.TypeOf(MaybeFigure{}) {
				continue
			}
			key, _, _ := strings.Cut(fd.Tag.Get("json"), ",")
			if !keys[of][key] && notInTable[key] == "" {
				t.Errorf("%s.%s (%q) is a figure no entry of the table reads: add its entry in figtable.go", typ.Name(), fd.Name, key)
			}
		}
	}
}
