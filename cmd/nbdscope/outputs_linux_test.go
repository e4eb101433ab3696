package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteFailureKeepsTheOthers: an output that fails to write after the
// measurement (/dev/full: it opens, every write fails) does not stop the
// others, and the command fails (exit 1) naming the flag, the file and
// why.
func TestWriteFailureKeepsTheOthers(t *testing.T) {
	var out, errs bytes.Buffer
	a := newApp(strings.NewReader(""), &out, &errs)
	good := filepath.Join(t.TempDir(), "s.csv")
	outs := []destination{{format: fmtText}, {format: fmtJSON, flag: "--export-json", path: "/dev/full"}, {format: fmtCSV, flag: "--export-csv", path: good}}
	rep := madeUpSpreadSweep(8)
	err := a.writeOutputs(outs, func(format string, w io.Writer) error { return writeSweepAs(format, w, rep, 80) })
	if exitCode(err) != exitFailure || !strings.Contains(err.Error(), "--export-json /dev/full: no space left on device") {
		t.Fatalf("error %v (exit %d), want exit 1 naming --export-json /dev/full and why", err, exitCode(err))
	}
	if data, _ := os.ReadFile(good); !bytes.HasPrefix(data, []byte("buffer,effective,")) || !strings.Contains(out.String(), "| buffer size |") {
		t.Errorf("the other outputs: file %q…, stdout %q…", data[:min(len(data), 40)], out.String()[:min(out.Len(), 40)])
	}
}
