package sweep

import (
	"testing"

	"nbdscope/model"
	"nbdscope/nbd"
)

// A real server's payload direction is told from the calls that moved
// bytes. The figures are measured runs of qemu-img convert against
// qemu-nbd 7.2 (1 GiB, 2 MiB requests): the read at a 2m server buffer
// has about as many server receives plus EAGAIN as sends plus EAGAIN,
// and was taken for a write, so its row's headline was the server's
// receive calls and its fill the client's idle send buffer.
func TestAssumedPayloadDirection(t *testing.T) {
	const export = 1 << 30
	cases := []struct {
		name   string
		server nbd.IOStats
		client *nbd.IOStats
		read   bool
	}{
		{"read at 2m", nbd.IOStats{RecvCalls: 532, RecvEAGAIN: 318, SendCalls: 693, SendEAGAIN: 144},
			&nbd.IOStats{RecvCalls: 2931, RecvEAGAIN: 856, SendCalls: 521}, true},
		{"read at 2m, the client not counted", nbd.IOStats{RecvCalls: 532, RecvEAGAIN: 318, SendCalls: 693, SendEAGAIN: 144}, nil, true},
		{"read at the default", nbd.IOStats{RecvCalls: 532, RecvEAGAIN: 501, SendCalls: 1723, SendEAGAIN: 1057},
			&nbd.IOStats{RecvCalls: 14541, RecvEAGAIN: 11571, SendCalls: 521}, true},
		{"write (qemu-img convert -S 0 to qemu-nbd)", nbd.IOStats{RecvCalls: 4721, RecvEAGAIN: 2320, SendCalls: 524},
			&nbd.IOStats{RecvCalls: 1044, RecvEAGAIN: 501, SendCalls: 5855, SendEAGAIN: 4439}, false},
		{"write, the client not counted", nbd.IOStats{RecvCalls: 4721, RecvEAGAIN: 2320, SendCalls: 524}, nil, false},
	}
	for _, c := range cases {
		p := assumedPayload(model.Counters{IO: c.server}, c.client, export)
		if got := p.ReadBytes == export && p.WriteBytes == 0; got != c.read {
			t.Errorf("%s: payload %+v, want read %v", c.name, p, c.read)
		}
	}
}

// An exec row's EAGAIN per 2 MiB is its receiver's, as a sweep of our
// load gives it: for a read the client's, once its calls are counted (it
// was null for every read, though the client's EAGAIN was in the row's
// figures), and unknown, never 0, when they are not.
func TestExecRowEAGAINIsTheReceivers(t *testing.T) {
	const export = 1 << 30
	srv := model.Counters{IO: nbd.IOStats{RecvCalls: 532, RecvEAGAIN: 504, SendCalls: 1821, SendEAGAIN: 1118}}
	cli := nbd.IOStats{RecvCalls: 15501, RecvEAGAIN: 12700, SendCalls: 521}
	run := model.ExecRun{Server: srv, ClientCalls: &cli, Payload: assumedPayload(srv, &cli, export), PayloadAssumed: true}
	run.Seconds = 4
	row := execRow(model.SweepRow{Buffer: "default"}, []model.ExecRun{run})
	want := 12700.0 / (export / (2 << 20))
	if got := float64(row.EAGAINPer2MiB); !row.EAGAINPer2MiB.Known() || got < want*0.999 || got > want*1.001 {
		t.Errorf("read row EAGAIN/2MiB %v, want the client's %.2f", row.EAGAINPer2MiB, want)
	}
	run.ClientCalls = nil
	if row := execRow(model.SweepRow{Buffer: "default"}, []model.ExecRun{run}); row.EAGAINPer2MiB.Known() {
		t.Errorf("read row EAGAIN/2MiB %v with the client's calls not counted, want unknown", row.EAGAINPer2MiB)
	}
}

// A real client's request latencies are not seen: all three latency
// figures of an exec row are unknown. The longest was 0, so the CSV's
// latency_max_ms said 0 beside empty p50 and p99.
func TestExecRowLatencyUnknown(t *testing.T) {
	run := model.ExecRun{Payload: nbd.Payload{ReadBytes: 1 << 30}}
	run.Seconds = 1
	row := execRow(model.SweepRow{Buffer: "default"}, []model.ExecRun{run})
	for name, f := range map[string]model.Figure{"p50": row.Figures.LatencyP50Ms, "p99": row.Figures.LatencyP99Ms, "max": row.Figures.LatencyMaxMs} {
		if f.Known() {
			t.Errorf("exec row latency %s %v, want unknown", name, f)
		}
	}
}
