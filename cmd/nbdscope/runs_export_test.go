package main

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
	"nbdscope/presets"
)

// runs export --format svg writes plot's document for the run: valid XML
// with the six charts (plot's tests check what is in them).
func TestExportSVG(t *testing.T) {
	rf := presets.RunFile{Name: "demo", Report: reporttest.Report()}
	var b bytes.Buffer
	if err := exportRun(rf, "SVG", &b); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	charts, root := 0, ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG export is not valid XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			for _, a := range se.Attr {
				if a.Name.Local == "class" && a.Value == "chart" {
					charts++
				}
			}
		}
	}
	if root != "svg" || charts != 6 {
		t.Errorf("root <%s> with %d charts, want <svg> with 6 (2 sides × 3)", root, charts)
	}
	if !strings.Contains(b.String(), "nbdscope run demo") {
		t.Error("the SVG does not name the run")
	}
}

func TestExportCSV(t *testing.T) {
	rf := presets.RunFile{Name: "demo", Report: reporttest.Report()}
	var b bytes.Buffer
	if err := exportRun(rf, "csv", &b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+len(rf.Report.Samples) {
		t.Fatalf("%d records for %d samples", len(recs), len(rf.Report.Samples))
	}
	if strings.Join(recs[0], ",") != strings.Join(model.RunCSVHeader(), ",") {
		t.Errorf("header %q", recs[0])
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	a := recs[1]
	for k, v := range map[string]string{
		"t": "0", "side": "A", "active": "true", "bytes": "268435456", "throughput_bps": "1500000000",
		"client_recv_calls_per_2mib": "10", "server_recv_calls_per_2mib": "0.5",
		"client_user_s": "0.125", "client_sys_s": "0.75", "server_user_s": "0.25", "server_sys_s": "1.5",
		"server_sndbuf_effective": "212992", "client_sndbuf_effective": "", "latency_p50_ms": "1.5", "latency_p99_ms": "",
	} {
		if a[col[k]] != v {
			t.Errorf("A sample %s = %q, want %q", k, a[col[k]], v)
		}
	}
	if bs := recs[2]; bs[col["throughput_bps"]] != "" || bs[col["side"]] != "B" || bs[col["active"]] != "true" {
		t.Errorf("B sample %q", bs)
	}
	if ext := recs[len(recs)-1]; ext[col["server_recv_calls_per_2mib"]] != "" || ext[col["server_user_s"]] != "" || ext[col["throughput_bps"]] != "500000000" {
		t.Errorf("external sample %q", ext)
	}
}

func TestExportUnknownFormat(t *testing.T) {
	var b bytes.Buffer
	if err := exportRun(presets.RunFile{Name: "demo", Report: reporttest.Report()}, "xml", &b); err == nil {
		t.Error("unknown format accepted")
	}
}
