package nbd

import (
	"fmt"
	"testing"
)

// replyJob is a job whose reply is a header of hdr bytes and, with
// payload > 0, a payload of that many bytes.
func replyJob(hdr, payload int) *job {
	j := &job{nvec: 1}
	j.vecs[0] = make([]byte, hdr)
	if payload > 0 {
		j.vecs[1], j.nvec = make([]byte, payload), 2
	}
	return j
}

// shape is each call as the lengths of its buffers.
func shape(calls [][][]byte) string {
	s := ""
	for _, c := range calls {
		s += "["
		for i, v := range c {
			if i > 0 {
				s += " "
			}
			s += fmt.Sprint(len(v))
		}
		s += "]"
	}
	return s
}

// A large payload starts a writev of its own on a unix socket, so the
// kernel puts it at the start of its buffers and neither copy runs askew
// (alignedPayloadMin); its header ends the call before. Smaller replies
// are still gathered into one call.
func TestWriteCallsStartLargePayloads(t *testing.T) {
	const mib2 = 2 << 20
	cases := []struct {
		name     string
		batch    []*job
		alignMin int
		want     string
	}{
		{"2 MiB reads, aligned", []*job{replyJob(28, mib2), replyJob(28, mib2), replyJob(28, mib2)}, alignedPayloadMin,
			"[28][2097152 28][2097152 28][2097152]"},
		{"2 MiB reads, gathered (tcp)", []*job{replyJob(28, mib2), replyJob(28, mib2), replyJob(28, mib2)}, 0,
			"[28 2097152 28 2097152 28 2097152]"},
		{"simple replies", []*job{replyJob(16, mib2), replyJob(16, mib2)}, alignedPayloadMin,
			"[16][2097152 16][2097152]"},
		{"small reads stay gathered", []*job{replyJob(28, 4096), replyJob(16, 0), replyJob(28, 4096), replyJob(28, 4096)}, alignedPayloadMin,
			"[28 4096 16 28 4096 28 4096]"},
		{"mixed", []*job{replyJob(28, 4096), replyJob(16, 0), replyJob(28, mib2), replyJob(28, 4096)}, alignedPayloadMin,
			"[28 4096 16 28][2097152 28 4096]"},
		{"just below the size", []*job{replyJob(28, alignedPayloadMin-1), replyJob(28, alignedPayloadMin)}, alignedPayloadMin,
			fmt.Sprintf("[28 %d 28][%d]", alignedPayloadMin-1, alignedPayloadMin)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls [][][]byte
			writeCalls(tc.batch, tc.alignMin, make([][]byte, 0, 2*maxRepliesPerWrite), func(v [][]byte) bool {
				calls = append(calls, append([][]byte(nil), v...))
				return true
			})
			if got := shape(calls); got != tc.want {
				t.Errorf("calls %s, want %s", got, tc.want)
			}
		})
	}
}

// A failed write ends the batch: nothing is sent after it.
func TestWriteCallsStopAtFailure(t *testing.T) {
	batch := []*job{replyJob(28, 2<<20), replyJob(28, 2<<20)}
	n := 0
	writeCalls(batch, alignedPayloadMin, nil, func([][]byte) bool { n++; return false })
	if n != 1 {
		t.Fatalf("%d calls after a failed one, want 1 in all", n)
	}
}
