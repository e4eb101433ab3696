package wire

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"nbdscope/model"
)

// loadHist is a load's buckets after requests of 60 µs to 5 ms.
func loadHist() []uint64 {
	var h model.Histogram
	for d := 60 * time.Microsecond; d < 5*time.Millisecond; d += 7 * time.Microsecond {
		h.Add(d)
	}
	return h.Snapshot()
}

// A poll reply's buckets go sparse and come back the same, in at most
// half the bytes of the dense array (counted: the controller decodes
// every number of every reply; BenchmarkPollReply: 25 µs a reply against
// 60 µs).
func TestHistSparseRoundTrip(t *testing.T) {
	want := loadHist()
	sparse, err := json.Marshal(Msg{Type: "reply", Hist: want})
	if err != nil {
		t.Fatal(err)
	}
	dense, _ := json.Marshal(struct {
		Hist []uint64 `json:"hist"`
	}{want})
	var got Msg
	if err := json.Unmarshal(sparse, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Hist, want) {
		t.Fatalf("buckets changed on the wire:\n got %v\nwant %v", got.Hist, want)
	}
	hist, _ := json.Marshal(Hist(want))
	t.Logf("buckets: %d bytes dense, %d sparse", len(dense), len(hist))
	if float64(len(hist)) > 0.5*float64(len(dense)) {
		t.Errorf("sparse buckets %d bytes against the dense ones' %d: want at most half", len(hist), len(dense))
	}
	var old Msg
	if err := json.Unmarshal([]byte(`{"type":"reply","hist":[0,3,0,5]}`), &old); err != nil || !slices.Equal(old.Hist, Hist{0, 3, 0, 5}) {
		t.Errorf("a dense array read as %v, %v", old.Hist, err)
	}
	var none Msg
	if b, _ := json.Marshal(Msg{Type: "reply"}); json.Unmarshal(b, &none) != nil || none.Hist != nil {
		t.Errorf("no buckets came back as %v", none.Hist)
	}
}

// Bad buckets are an error, never a panic or an allocation without
// bound.
func TestHistBadInput(t *testing.T) {
	for _, in := range []string{
		`{"n":4,"nz":[4,1]}`, `{"n":4,"nz":[1]}`, `{"n":-1}`, `{"n":99999999}`, `{"n":4,"nz":[18446744073709551615,1]}`, `"x"`, `{"n":"4"}`,
	} {
		var h Hist
		if err := json.Unmarshal([]byte(in), &h); err == nil {
			t.Errorf("%s: read as %v, want an error", in, h)
		}
	}
}

// BenchmarkPollReply decodes a load's poll reply, its buckets dense (as
// before) and sparse.
func BenchmarkPollReply(b *testing.B) {
	h := loadHist()
	m := Msg{Type: "reply", Seq: 9, Bytes: 1 << 40, Ops: 1 << 20, ActiveNs: 1e10, Conns: 1, SndBuf: 212992, RcvBuf: 212992}
	m.Hist = h
	sparse, _ := json.Marshal(m)
	m.Hist = nil
	plain, _ := json.Marshal(m)
	denseHist, _ := json.Marshal(h)
	dense := append(append(append([]byte(nil), plain[:len(plain)-1]...), `,"hist":`...), denseHist...)
	dense = append(dense, '}')
	for name, raw := range map[string][]byte{"dense": dense, "sparse": sparse} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				var m Msg
				if err := json.Unmarshal(raw, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
