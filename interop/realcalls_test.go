package interop

// A real client's socket calls, counted by nbdscope (realproc: at the
// socket layer by bpf where allowed, else per call or per thread), against
// strace -f -c of the very same run (issue 23 §2's agreement).

import (
	"path/filepath"
	"strings"
	"testing"

	"nbdscope/internal/stracetest"
	"nbdscope/model"
	"nbdscope/phrase"
)

// TestSweepExecCallsAgreeWithStrace: sweep --exec runs qemu-img convert
// under strace -f -c; nbdscope's count of the client's receive and send
// calls (EAGAIN included) for that run agrees with strace's within 1%.
// strace is part of the client tree nbdscope counts, and makes no socket
// calls of its own.
func TestSweepExecCallsAgreeWithStrace(t *testing.T) {
	need(t, "qemu-img", "strace")
	needCounting(t)
	out := filepath.Join(t.TempDir(), "strace.out")
	cmd := "strace -f " + strings.Join(stracetest.Columns, " ") + " -o " + out + " -e trace=recvmsg,recvfrom,sendmsg,sendto " +
		`qemu-img convert -f raw -O raw -W -n {uri} 'json:{"file":{"driver":"null-co","size":{size}}}'`
	rep := sweepExecOne(t, "--exec", cmd, "--sndbuf", "default", "--warmup", "0")
	if len(rep.Rows) != 1 || rep.Rows[0].Exec == nil || len(rep.Rows[0].Exec.Runs) != 1 {
		t.Fatalf("want one row of one run: %+v", rep.Rows)
	}
	run := rep.Rows[0].Exec.Runs[0]
	if run.ClientCalls == nil {
		t.Fatalf("the client's calls were not counted: %s", phrase.ReasonWithFix(*run.CallsNA))
	}
	st, err := stracetest.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	io := *run.ClientCalls
	r, send := st.Sum("recvmsg", "recvfrom"), st.Sum("sendmsg", "sendto").Calls
	recv, recvErr := r.Calls, r.Errors
	if recv < 100 {
		t.Fatalf("strace saw %d receive calls: want a run that moved data\n%v", recv, st)
	}
	if got := io.RecvCalls + io.RecvEAGAIN; !stracetest.Within1Pct(got, recv) {
		t.Errorf("receive calls: nbdscope %d, strace %d", got, recv)
	}
	if got := io.SendCalls + io.SendEAGAIN; !stracetest.Within1Pct(got, send) {
		t.Errorf("send calls: nbdscope %d, strace %d", got, send)
	}
	if !stracetest.Within1Pct(io.RecvEAGAIN, recvErr) {
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
