package interop

// A real client's socket calls, counted by nbdscope (realproc: at the
// socket layer by bpf where allowed, else per call or per thread), against
// strace -f -c of the very same run (issue 23 §2's agreement).

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"nbdscope/model"
)

// straceCounts reads strace -c's table: calls and errors per syscall.
func straceCounts(t *testing.T, path string) (calls, errs map[string]uint64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("strace -o: %v", err)
	}
	calls, errs = map[string]uint64{}, map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		// % time, seconds, usecs/call, calls, [errors], syscall
		if len(f) < 5 || f[len(f)-1] == "total" || strings.HasPrefix(f[0], "-") || f[0] == "%" {
			continue
		}
		n, err := strconv.ParseUint(f[3], 10, 64)
		if err != nil {
			continue
		}
		calls[f[len(f)-1]] = n
		if len(f) == 6 {
			e, _ := strconv.ParseUint(f[4], 10, 64)
			errs[f[len(f)-1]] = e
		}
	}
	return calls, errs
}

// within1pct tells whether got is within 1% of want (or both are tiny and
// equal within one call).
func within1pct(got, want uint64) bool {
	d := math.Abs(float64(got) - float64(want))
	return d <= 1 || d <= 0.01*float64(want)
}

// TestSweepExecCallsAgreeWithStrace: sweep --exec runs qemu-img convert
// under strace -f -c; nbdscope's count of the client's receive and send
// calls (EAGAIN included) for that run agrees with strace's within 1%.
// strace is part of the client tree nbdscope counts, and makes no socket
// calls of its own.
func TestSweepExecCallsAgreeWithStrace(t *testing.T) {
	need(t, "qemu-img", "strace")
	needCounting(t)
	out := filepath.Join(t.TempDir(), "strace.out")
	cmd := "strace -f -c -o " + out + " -e trace=recvmsg,recvfrom,sendmsg,sendto " +
		`qemu-img convert -f raw -O raw -W -n {uri} 'json:{"file":{"driver":"null-co","size":{size}}}'`
	rep := sweepExecOne(t, "--exec", cmd, "--sndbuf", "default", "--warmup", "0")
	if len(rep.Rows) != 1 || rep.Rows[0].Exec == nil || len(rep.Rows[0].Exec.Runs) != 1 {
		t.Fatalf("want one row of one run: %+v", rep.Rows)
	}
	run := rep.Rows[0].Exec.Runs[0]
	if run.ClientCalls == nil {
		t.Fatalf("the client's calls were not counted: %s", run.CallsNA)
	}
	calls, errs := straceCounts(t, out)
	io := *run.ClientCalls
	recv, send := calls["recvmsg"]+calls["recvfrom"], calls["sendmsg"]+calls["sendto"]
	recvErr := errs["recvmsg"] + errs["recvfrom"]
	if recv < 100 {
		t.Fatalf("strace saw %d receive calls: want a run that moved data\n%v", recv, calls)
	}
	if got := io.RecvCalls + io.RecvEAGAIN; !within1pct(got, recv) {
		t.Errorf("receive calls: nbdscope %d, strace %d", got, recv)
	}
	if got := io.SendCalls + io.SendEAGAIN; !within1pct(got, send) {
		t.Errorf("send calls: nbdscope %d, strace %d", got, send)
	}
	if !within1pct(io.RecvEAGAIN, recvErr) {
		t.Errorf("receive EAGAIN: nbdscope %d, strace's errors %d", io.RecvEAGAIN, recvErr)
	}
	t.Logf("receive calls %d (EAGAIN %d), send %d; strace %d (errors %d), %d", io.RecvCalls+io.RecvEAGAIN, io.RecvEAGAIN,
		io.SendCalls+io.SendEAGAIN, recv, recvErr, send)
}

// sweepExecOne runs an exec sweep of one measured run over a 256 MiB
// export and returns the report.
func sweepExecOne(t *testing.T, args ...string) model.SweepReport {
	t.Helper()
	return sweepJSON(t, t.TempDir(), append([]string{"--bytes", "256m", "--repeat", "1"}, args...)...)
}
