package model

import (
	"slices"
	"testing"
)

// A figure CSV row carries the server's receive buffer as requested and
// as read back, beside the other buffers: a run with --server-rcvbuf or
// --at b.server-rcvbuf=1m left no trace in run --csv or runs export.
func TestFigureCSVHasServerRcvBuf(t *testing.T) {
	head := FigureCSVHeader()
	f := Figures{Settings: Stamp{ServerRcvBuf: "1m"}, SndBuf: Buffers{ServerRcvEffective: 2 << 20}}
	cells := FigureCSVCells(&f)
	for col, want := range map[string]string{"server_rcvbuf": "1m", "server_rcvbuf_effective": "2097152"} {
		i := slices.Index(head, col)
		if i < 0 {
			t.Errorf("no %s column in %v", col, head)
			continue
		}
		if cells[i] != want {
			t.Errorf("%s = %q, want %q", col, cells[i], want)
		}
	}
	f.Settings.ServerRcvBuf = "" // left out of a stamp at its default
	if i := slices.Index(head, "server_rcvbuf"); i >= 0 && FigureCSVCells(&f)[i] != BufDefaultName {
		t.Errorf("server_rcvbuf at the default = %q, want %q", FigureCSVCells(&f)[i], BufDefaultName)
	}
}
