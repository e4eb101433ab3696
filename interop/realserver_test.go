package interop

// A real server as a side (--server-b): qemu-nbd and nbdkit measured and
// their send buffers changed live from outside (issue 23 §3, §4).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/model"
)

// qemuNbdNull serves a null-co export of {size} on {socket}: the issue's
// example.
const qemuNbdNull = `qemu-nbd -r -t -e 0 -f raw -k {socket} 'json:{"file":{"driver":"null-co","size":{size}}}'`

// runReport runs nbdscope run with args and --json and parses the report.
func runReport(t *testing.T, wantCode int, args ...string) (model.Report, envResult) {
	t.Helper()
	r := runEnv(t, []string{"NBDSCOPE_HOME=" + t.TempDir()}, nbdscopeBin, append([]string{"run", "--json"}, args...)...)
	if r.code != wantCode {
		t.Fatalf("want exit %d:\n%s", wantCode, r)
	}
	var rep model.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("run --json: %v\n%s", err, r)
	}
	return rep, r
}

// TestRealServerQemuNbdLive is the "done when": qemu-nbd serves
// side B at its own default send buffer, changed to 2m at 3 s from
// outside. B's server figures are counted, the change event has the
// effective 4m read back from qemu-nbd's socket and says it reached it,
// and qemu-nbd's send calls plus send EAGAIN per 2 MiB fall after the
// change (a ratio of counts).
func TestRealServerQemuNbdLive(t *testing.T) {
	need(t, "qemu-nbd")
	needCounting(t)
	rep, r := runReport(t, 0, "--server-b", qemuNbdNull, "--sndbuf-b", "default", "--at", "3s:b.sndbuf=2m", "--duration", "6s")
	var ev *model.Event
	for i, e := range rep.Events {
		if e.Side == "B" && e.Setting == model.SetSndBuf {
			ev = &rep.Events[i]
		}
	}
	if ev == nil || ev.Effective != 4<<20 || ev.Reached == nil || *ev.Reached < 1 {
		t.Fatalf("want B's sndbuf event with the effective 4m read back from at least one socket: %+v\n%s", ev, r)
	}
	b := rep.Sides[1]
	srv := b.Summary.Server
	if srv == nil || !srv.SendCallsPer2MiB.Known() || srv.SendCalls == 0 || !srv.CoresBusy.Known() || !srv.VolCSPer2MiB.Known() {
		t.Fatalf("B's server figures: %+v", srv)
	}
	if len(b.Segments) < 2 {
		t.Fatalf("want a segment before and after the change, got %d", len(b.Segments))
	}
	// Its own send buffer (what its socket had when first seen) is
	// reported, and at default it is the one in effect.
	if own := b.Summary.SndBuf.ServerOwn; own <= 0 || b.Segments[0].SndBuf.ServerEffective != own {
		t.Errorf("qemu-nbd's own send buffer %d, in effect at default %d: want it reported, and the same", own, b.Segments[0].SndBuf.ServerEffective)
	}
	per := func(g model.Segment) float64 { return float64(g.Server.SendCallsPer2MiB + g.Server.SendEAGAINPer2MiB) }
	before, after := per(b.Segments[0]), per(b.Segments[len(b.Segments)-1])
	if !(after < before) {
		t.Errorf("qemu-nbd's send calls + EAGAIN per 2 MiB: %.2f before the change, %.2f after: want fewer", before, after)
	}
	t.Logf("qemu-nbd send calls+EAGAIN per 2 MiB: %.2f at its own buffer, %.2f at 2m (4m effective)", before, after)
}

// TestRealServerNbdkit: nbdkit serves side B; its figures are counted.
func TestRealServerNbdkit(t *testing.T) {
	need(t, "nbdkit")
	needCounting(t)
	rep, _ := runReport(t, 0, "--server-b", "nbdkit -U {socket} -f null {size}", "--duration", "3s")
	srv := rep.Sides[1].Summary.Server
	if srv == nil || srv.SendCalls == 0 || !srv.SendCallsPer2MiB.Known() || !srv.CoresBusy.Known() {
		t.Fatalf("nbdkit's figures: %+v", srv)
	}
}

// TestRealServerBadCommands: a command that exits at once, one that never
// listens and one that listens elsewhere each get a clear error and exit
// 1 within the bounded wait, and leave no process behind.
func TestRealServerBadCommands(t *testing.T) {
	dir := testbin.ShortDir(t)
	cases := []struct{ name, cmd, want string }{
		{"exits", "sh -c 'echo no such export >&2; exit 3' {socket}", "exited before it listened"},
		{"never listens", "sh -c 'exec sleep 37.25' {socket}", "did not listen on"},
		{"elsewhere", "sh -c 'exec nbdkit -U " + filepath.Join(dir, "x.sock") + " -f null 1G' {socket}", "it listens on " + filepath.Join(dir, "x.sock")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(c.cmd, "nbdkit") {
				need(t, "nbdkit")
			}
			r := runEnv(t, []string{"NBDSCOPE_HOME=" + t.TempDir()}, nbdscopeBin, "run", "--server-b", c.cmd, "--duration", "2s")
			if r.code != 1 || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("want exit 1 and %q:\n%s", c.want, r)
			}
			if pids := testbin.ProcsWith(c.cmd[strings.Index(c.cmd, "'")+1 : strings.LastIndex(c.cmd, "'")]); len(pids) > 0 {
				t.Errorf("left behind: %v", pids)
			}
		})
	}
}

// TestRealServerCrash: qemu-nbd killed mid-run is reported as side B's
// server dying, with its status, and run exits 1.
func TestRealServerCrash(t *testing.T) {
	need(t, "qemu-nbd")
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := `sh -c 'echo $$ > ` + pidFile + `; exec qemu-nbd -r -t -e 0 -f raw -k "$0" "json:{\"file\":{\"driver\":\"null-co\",\"size\":$1}}"' {socket} {size}`
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 { // up to 10 s for it to start
			time.Sleep(100 * time.Millisecond)
			if b, err := os.ReadFile(pidFile); err == nil && len(b) > 1 {
				time.Sleep(1500 * time.Millisecond)
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
				return
			}
		}
	}()
	rep, r := runReport(t, 1, "--server-b", cmd, "--duration", "6s")
	<-done
	if len(rep.Crashes) == 0 || rep.Crashes[0].Side != "B" || rep.Crashes[0].Role != model.RoleServer || !strings.Contains(rep.Crashes[0].Reason, "killed") {
		t.Fatalf("want side B's server reported killed:\n%+v\n%s", rep.Crashes, r)
	}
}

// TestSweepRealServerQemuImg: sweep --server qemu-nbd --preset
// qemu-img-read sweeps the real server's send buffer, set on each
// connection as it is accepted: both processes' calls are counted, and
// qemu-nbd's send calls plus EAGAIN per 2 MiB fall at 2m (a ratio of
// counts).
func TestSweepRealServerQemuImg(t *testing.T) {
	need(t, "qemu-nbd", "qemu-img")
	needCounting(t)
	rep := sweepExec(t, t.TempDir(), "--server", qemuNbdNull, "--preset", "qemu-img-read")
	if len(rep.Rows) != 2 {
		t.Fatalf("want 2 rows, got %d", len(rep.Rows))
	}
	per := func(r model.SweepRow) float64 {
		return float64(r.Figures.Server.SendCallsPer2MiB + r.Figures.Server.SendEAGAINPer2MiB)
	}
	for _, r := range rep.Rows {
		run := r.Exec.Runs[0]
		if !run.PayloadAssumed || run.ClientCalls == nil || run.Server.IO.SendCalls == 0 || !r.Figures.Client.RecvCallsPer2MiB.Known() {
			t.Fatalf("%s: want both processes' calls counted: %+v", r.Buffer, run)
		}
	}
	def, big := rep.Rows[0], rep.Rows[1]
	if big.Effective != 4<<20 || !(per(big) < per(def)) {
		t.Errorf("qemu-nbd send calls+EAGAIN per 2 MiB %.2f at %s (effective %d), %.2f at default: want fewer at 4m effective",
			per(big), big.Buffer, big.Effective, per(def))
	}
}
