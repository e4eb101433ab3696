package interop

import (
	"encoding/json"
	"testing"

	"nbdscope/model"
)

// TestStandInReadsLikeQemuImg: at a 2m send buffer our load (its
// qemu-img-shaped default: the ppoll reader, each reply part read by a
// call of its own, the zero scan by sector) makes at most 1.33x the
// receive calls per 2 MiB qemu-img convert makes from the same server.
// Through Go's netpoller, with the header read ahead and one scan per
// buffer, it made 1.89x (20.28 against 10.73 in calibrate's median of 3;
// the quiet machine: 23.87 against 10.02, 2.38x): the netpoller
// hands the reader the first bytes of each reply, where qemu-img finds
// the socket full.
func TestStandInReadsLikeQemuImg(t *testing.T) {
	need(t, "qemu-img")
	needCounting(t)
	r := runEnv(t, []string{"NBDSCOPE_HOME=" + t.TempDir()}, nbdscopeBin,
		"calibrate", "--sndbuf", "2m", "--bytes", "1g", "--repeat", "3", "--json")
	if r.code != 0 {
		t.Fatalf("calibrate:\n%s", r)
	}
	var rep model.CalibrationReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Rows) != 1 {
		t.Fatalf("calibrate --json: %v, %d rows\n%s", err, len(rep.Rows), r)
	}
	row := rep.Rows[0]
	ours, real := row.Ours.RecvCallsPer2MiB, row.Real.RecvCallsPer2MiB
	if !ours.Known() || !real.Known() || real <= 0 {
		t.Fatalf("receive calls per 2 MiB: ours %v, qemu-img %v (%s)", ours, real, row.CallsNA)
	}
	t.Logf("at 2m: ours %.2f, qemu-img %.2f receive calls per 2 MiB (%.2fx)", float64(ours), float64(real), float64(ours/real))
	if ours > real*1.33 {
		t.Errorf("ours %.2f receive calls per 2 MiB, qemu-img %.2f: %.2fx, over 1.33x", float64(ours), float64(real), float64(ours/real))
	}
}
