package childproc

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReplySeqIsEnvelope: where replySeq reads a line's sequence number
// from its first bytes, decoding the envelope gives the same reply and
// number; every other line (another type, seq 0 left out, a number
// that does not end or of 20 digits, fields in another order) is left to the decoder.
func TestReplySeqIsEnvelope(t *testing.T) {
	body := strings.Repeat(`"x":1,`, 80)
	lines := []string{
		`{"type":"reply","seq":1,` + body + `"y":2}`,
		`{"type":"reply","seq":9999999999999999999}`,
		`{"type":"reply","seq":18446744073709551615}`, // 20 digits: to the decoder
		`{"type":"reply","seq":42,"err":"no"}`,
		`{"type":"error","seq":7,"err":"refused"}`,
		`{"type":"ready","uri":"nbd+unix:///"}`,
		`{"type":"reply","counters":{}}`,
		`{"seq":3,"type":"reply"}`,
		`{"type":"reply","seq":}`,
		`{"type":"reply","seq":12`,
		`{"type":"reply","seq":1x}`,
	}
	taken := 0
	for _, l := range lines {
		seq, ok := replySeq([]byte(l))
		if !ok {
			continue
		}
		taken++
		var e envelope
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Type != TypeReply || e.Seq != seq {
			t.Errorf("%s: replySeq read seq %d; the envelope is %+v (%v)", l, seq, e, err)
		}
	}
	if taken != 3 {
		t.Errorf("replySeq read %d of the lines, want the 3 replies written as Writer writes them", taken)
	}
	m, _ := json.Marshal(testMsg{Type: TypeReply, Seq: 9, N: 5})
	if seq, ok := replySeq(m); !ok || seq != 9 {
		t.Errorf("a reply marshalled as the children's: %s read as %d, %v", m, seq, ok)
	}
}

// BenchmarkRouteReply: what routing a 600-byte poll reply to its call
// costs, by its first bytes against decoding its envelope (which the
// controller did twice a reply).
func BenchmarkRouteReply(b *testing.B) {
	line := []byte(`{"type":"reply","seq":123,` + strings.Repeat(`"counters":{"io":[1,2,3]},`, 22) + `"conns":2}`)
	b.Run("prefix", func(b *testing.B) {
		for b.Loop() {
			if _, ok := replySeq(line); !ok {
				b.Fatal("not read")
			}
		}
	})
	b.Run("envelope", func(b *testing.B) {
		for b.Loop() {
			var e envelope
			if err := json.Unmarshal(line, &e); err != nil {
				b.Fatal(err)
			}
		}
	})
}
