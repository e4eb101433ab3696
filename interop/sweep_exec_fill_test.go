package interop

import (
	"runtime"
	"testing"

	"nbdscope/model"
)

// TestSweepExecFill (issue 24): an exec sweep samples the bulk sender's
// send buffer while the real client runs — the server's sockets for a
// read (nbdcopy), the client tree's for a write (qemu-img convert to the
// export) — so each row's fill is measured, against the sender's own
// limit: the server's effective buffer for reads, the client's (left at
// the OS default, so the same at every size) for writes.
func TestSweepExecFill(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the fill is sampled with sock_diag, on Linux only")
	}
	need(t, "qemu-img", "nbdcopy")
	for _, preset := range []string{"nbdcopy-blkhash", "qemu-img-write"} {
		t.Run(preset, func(t *testing.T) {
			rep := sweepExec(t, t.TempDir(), "--preset", preset)
			if len(rep.Rows) != 2 {
				t.Fatalf("%d rows", len(rep.Rows))
			}
			var limits []int64
			for _, row := range rep.Rows {
				fl := row.Figures.Fill()
				t.Logf("%s %s: full %.1f%% empty %.1f%% mean %.0f of %d bytes, %d samples", preset, row.Buffer,
					fl.FullPct, fl.EmptyPct, fl.Bytes, fl.Limit, fl.Samples)
				if !fl.Known() {
					t.Fatalf("%s: fill not measured (%+v)", row.Buffer, row.Exec.Runs[0].FillNA)
				}
				if fl.FullPct < 0 || fl.FullPct > 100 || fl.EmptyPct < 0 || fl.FullPct+fl.EmptyPct > 100.001 {
					t.Errorf("%s: full %v%%, empty %v%%", row.Buffer, fl.FullPct, fl.EmptyPct)
				}
				limits = append(limits, fl.Limit)
			}
			write := preset == "qemu-img-write"
			if got := model.IsWrite(rep.Rows[0].Figures.Settings.Workload); got != write {
				t.Fatalf("workload %q", rep.Rows[0].Figures.Settings.Workload)
			}
			switch {
			case write && limits[0] != limits[1]:
				t.Errorf("write: the limits sampled %v differ with the server's buffer: not the client's sockets", limits)
			case !write && limits[1] != int64(rep.Rows[1].Effective):
				t.Errorf("read at %s: limit %d, want the server's effective %d", rep.Rows[1].Buffer, limits[1], rep.Rows[1].Effective)
			}
		})
	}
}
