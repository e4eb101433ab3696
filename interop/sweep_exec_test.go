package interop

// Real clients swept by `nbdscope sweep --exec` (issue 15 §1).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/model"
	"nbdscope/shellword"
)

// sweepExec runs an exec sweep of default and 2m over a 256 MiB export,
// one warm-up and one measured run each, and returns the report.
func sweepExec(t *testing.T, home string, args ...string) model.SweepReport {
	t.Helper()
	return sweepJSON(t, home, append([]string{"--sndbuf", "default,2m", "--bytes", "256m", "--repeat", "1", "--warmup", "1"}, args...)...)
}

// sweepJSON runs nbdscope sweep --json with args and NBDSCOPE_HOME at
// home, and returns the report it printed.
func sweepJSON(t *testing.T, home string, args ...string) model.SweepReport {
	t.Helper()
	args = append([]string{"sweep", "--json"}, args...)
	r := runEnv(t, []string{"NBDSCOPE_HOME=" + home}, nbdscopeBin, args...)
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%s", r)
	}
	var rep model.SweepReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("sweep --json does not parse: %v\n%s", err, r)
	}
	return rep
}

// TestSweepExecRealClients: qemu-img convert (reading and writing) and
// nbdcopy swept over two send buffers: every row has a time, the client
// tree's user and system CPU, and the server's own calls, with the
// export's bytes moved exactly. No timing is asserted.
func TestSweepExecRealClients(t *testing.T) {
	need(t, "qemu-img", "nbdcopy")
	for _, preset := range []string{"qemu-img-read", "qemu-img-write", "nbdcopy-blkhash"} {
		t.Run(preset, func(t *testing.T) {
			home := t.TempDir()
			rep := sweepExec(t, home, "--preset", preset, "--save", "s")
			if len(rep.Rows) != 2 || rep.Partial || rep.Spec.Exec == nil {
				t.Fatalf("want 2 complete exec rows, got %d (partial %v %q)", len(rep.Rows), rep.Partial, rep.PartialReason)
			}
			write := preset == "qemu-img-write"
			for _, row := range rep.Rows {
				x := row.Exec
				if x == nil || len(x.Runs) != 1 {
					t.Fatalf("%s: no exec figures: %+v", row.Buffer, row)
				}
				if row.Seconds <= 0 || row.ClientUserS < 0 || row.ClientSysS < 0 || row.ClientUserS+row.ClientSysS <= 0 {
					t.Errorf("%s: time %v user %v system %v: want a time and the client's CPU", row.Buffer, row.Seconds, row.ClientUserS, row.ClientSysS)
				}
				srv := row.Figures.Server
				if srv == nil || !row.ServerUserS.Known() || !row.ServerSysS.Known() {
					t.Fatalf("%s: server figures unknown", row.Buffer)
				}
				if !row.Figures.Client.VolCSPer2MiB.Known() || !row.Figures.Client.RecvCallsPer2MiB.Known() || row.Figures.Client.RecvCallsPer2MiB <= 0 {
					t.Errorf("%s: client wake-ups %v, client recv calls %v per 2 MiB: want both counted",
						row.Buffer, row.Figures.Client.VolCSPer2MiB, row.Figures.Client.RecvCallsPer2MiB)
				}
				// Held where the default placement says, as a live side is.
				if place := row.Figures.Placement; place.Setting != model.DefaultPlacement() || row.Figures.Settings.Placement != place.Setting ||
					(place.Setting == model.PlaceSplit && (place.LoadCPUs == "any" || place.ServerCPUs == "any" || place.LoadCPUs == place.ServerCPUs)) {
					t.Errorf("%s: placement %+v (stamped %q), want %s with the client and server on CPUs of their own",
						row.Buffer, place, row.Figures.Settings.Placement, model.DefaultPlacement())
				}
				pl := x.Runs[0].Payload
				if got := pl.ReadBytes + pl.WriteBytes; got != 256<<20 {
					t.Errorf("%s: the server moved %d payload bytes (read %d, write %d), want the export's %d", row.Buffer, got, pl.ReadBytes, pl.WriteBytes, 256<<20)
				}
				calls := srv.SendCallsPer2MiB
				if write {
					calls = srv.RecvCallsPer2MiB
				}
				if !calls.Known() || calls <= 0 {
					t.Errorf("%s: server calls per 2 MiB %v, want a count", row.Buffer, calls)
				}
				if !write && x.ServerSentB < 256<<20 {
					t.Errorf("%s: server sent %d bytes, fewer than the payload", row.Buffer, x.ServerSentB)
				}
			}
			// Where the kernel let the buffer grow, the server needs fewer
			// send calls per 2 MiB of reads: a ratio of counts.
			def, big := rep.Rows[0], rep.Rows[1]
			bigCalls, defCalls := big.Figures.Server.SendCallsPer2MiB, def.Figures.Server.SendCallsPer2MiB
			if !write && big.Effective >= 2*def.Effective && bigCalls >= defCalls {
				t.Errorf("send calls per 2 MiB: %v at %s (%d) not below %v at default (%d)", bigCalls, big.Buffer,
					big.Effective, defCalls, def.Effective)
			}
			// Saved like any run: runs show prints the seed's table.
			r := runEnv(t, []string{"NBDSCOPE_HOME=" + home}, nbdscopeBin, "runs", "show", "s")
			if r.code != 0 || !strings.Contains(r.stdout, "| buffer size | time | user | system |") || !strings.Contains(r.stdout, "optimal: ") {
				t.Errorf("runs show of the saved sweep:\n%s", r)
			}
		})
	}
}

// TestSweepExecFailure: a failing command stops the sweep with exit 1, its
// exit status and the end of its stderr.
func TestSweepExecFailure(t *testing.T) {
	r := runEnv(t, nil, nbdscopeBin, "sweep", "--exec", `sh -c 'echo first >&2; echo boom {socket} >&2; exit 3'`,
		"--sndbuf", "default,2m", "--bytes", "16m", "--repeat", "1")
	if r.code != 1 || !strings.Contains(r.stderr, "exit status 3") || !strings.Contains(r.stderr, "boom /") ||
		!strings.Contains(r.stderr, "first") {
		t.Fatalf("want exit 1 with the status and stderr tail:\n%s", r)
	}
}

// TestSweepExecRounds: the warm-ups of every size come first, then one
// measured run of each size per round, so a slow stretch of a shared
// machine meets every size alike; each row has all its repeats.
func TestSweepExecRounds(t *testing.T) {
	log := filepath.Join(t.TempDir(), "order")
	r := runEnv(t, nil, nbdscopeBin, "sweep", "--exec", "sh -c 'echo {socket} >> "+log+"'",
		"--sndbuf", "default,1m,2m", "--bytes", "1m", "--repeat", "2", "--warmup", "1", "--json")
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%s", r)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	socks := strings.Fields(string(b))
	if len(socks) != 9 {
		t.Fatalf("want 3 sizes × (1 warm-up + 2 repeats) = 9 runs, got %d: %q", len(socks), socks)
	}
	for i, sock := range socks {
		if sock != socks[i%3] || (i < 3 && slices.Contains(socks[:i], sock)) {
			t.Fatalf("runs by socket %q: want rounds of the 3 sizes' sockets in one order", socks)
		}
	}
	var rep model.SweepReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Rows {
		if row.Repeats != 2 || row.Exec == nil || len(row.Exec.Runs) != 2 {
			t.Errorf("%s: %d repeats, want 2", row.Buffer, row.Repeats)
		}
	}
}

// envResult is a command's outcome with stdout and stderr apart.
type envResult struct {
	cmdline        string
	stdout, stderr string
	code           int
}

func (r envResult) String() string {
	return fmt.Sprintf("$ %s\n[exit %d]\nstdout:\n%s\nstderr:\n%s", r.cmdline, r.code, r.stdout, r.stderr)
}

// runEnv runs name with env added, bounded by cmdTimeout (a sweep of a
// few real client runs takes seconds).
func runEnv(t testing.TB, env []string, name string, args ...string) envResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	var out, errb testbin.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := envResult{cmdline: shellword.Join(append([]string{name}, args...)), stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("timed out:\n%s", r)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", r.cmdline, err)
	}
	return r
}
