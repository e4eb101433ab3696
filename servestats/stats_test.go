package servestats

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"nbdscope/model"
	"nbdscope/nbd"
)

// fakeServer is a Source whose connections the test moves by hand.
type fakeServer struct {
	open   []nbd.ConnInfo
	closed nbd.ServerStats // counters of the connections gone
}

func (f *fakeServer) Stats() nbd.ServerStats {
	st := f.closed
	st.Open = len(f.open)
	for _, c := range f.open {
		st.IO, st.Payload = st.IO.Add(c.IO), st.Payload.Add(c.Payload)
	}
	return st
}

func (f *fakeServer) Conns() []nbd.ConnInfo { return f.open }

func TestReporterLinesAndSummary(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	src := &fakeServer{}
	cpu := model.Counters{}
	var out bytes.Buffer
	r := New(src, func() model.Counters { return cpu }, &out, clock)
	// Interval 1: one connection reads 4 MiB with 20 sends, 10 of them EAGAIN.
	c := nbd.ConnInfo{ID: 1, Since: now, IO: nbd.IOStats{SendCalls: 20, SendEAGAIN: 10, RecvCalls: 2},
		Payload: nbd.Payload{ReadBytes: 4 << 20}}
	src.open = []nbd.ConnInfo{c}
	src.closed.Accepted = 1
	now = now.Add(time.Second)
	cpu = model.Counters{UserS: 0.1, SysS: 0.2, VolCS: 8, InvolCS: 2, MinFlt: 6}
	r.Tick()
	// Interval 2: it reads 2 MiB more with 2 sends and closes.
	c.IO.SendCalls, c.Payload.ReadBytes = 22, 6<<20
	src.open = nil
	src.closed.IO, src.closed.Payload = c.IO, c.Payload
	r.ConnClosed(c)
	src.closed.Refused = 3 // three connections beyond the limit
	now = now.Add(time.Second)
	r.Tick()
	want := []string{
		"stats t=1.0 conn=1 state=open bytes=4194304 gibps=0.004 send_per_2mib=10.00 recv_per_2mib=1.00 send_eagain_per_2mib=5.00 recv_eagain_per_2mib=0.00 total_bytes=4194304",
		"stats t=1.0 total conns=1 bytes=4194304 gibps=0.004 send_per_2mib=10.00 recv_per_2mib=1.00 send_eagain_per_2mib=5.00 recv_eagain_per_2mib=0.00 wakeups_per_2mib=4.00+1.00 faults_per_2mib=3.00 cpu_s=0.300 cores=0.30 total_bytes=4194304 refused=0",
		"stats t=2.0 conn=1 state=closed bytes=2097152 gibps=0.002 send_per_2mib=2.00 recv_per_2mib=0.00 send_eagain_per_2mib=0.00 recv_eagain_per_2mib=0.00 total_bytes=6291456",
		"stats t=2.0 total conns=0 bytes=2097152 gibps=0.002 send_per_2mib=2.00 recv_per_2mib=0.00 send_eagain_per_2mib=0.00 recv_eagain_per_2mib=0.00 wakeups_per_2mib=0.00+0.00 faults_per_2mib=0.00 cpu_s=0.000 cores=0.00 total_bytes=6291456 refused=3",
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
	s := r.Summary()
	if len(s.Connections) != 1 || s.Connections[0].ReadBytes != 6<<20 || s.Connections[0].Open || s.Connections[0].Seconds != 1 ||
		s.Total.ReadBytes != 6<<20 || s.Total.Server.SendCalls != 22 || s.Total.Server.VolCS != 8 || s.Total.Accepted != 1 || s.Total.Refused != 3 {
		t.Fatalf("summary %+v", s)
	}
	var tab bytes.Buffer
	WriteTable(&tab, s)
	if !strings.Contains(tab.String(), "1 conns, 3 refused") || !strings.Contains(tab.String(), "6291456") {
		t.Errorf("table:\n%s", tab.String())
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, s); err != nil || !strings.Contains(js.String(), `"refused": 3`) {
		t.Errorf("JSON (%v):\n%s", err, js.String())
	}
}
