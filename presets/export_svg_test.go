package presets

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// runs export --format svg writes plot's document for the run: valid XML
// with the six charts (plot's tests check what is in them).
func TestExportSVG(t *testing.T) {
	rf := RunFile{Name: "demo", Report: testReport()}
	var b bytes.Buffer
	if err := ExportRun(rf, "SVG", &b); err != nil {
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
