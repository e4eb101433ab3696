package sweep

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/model"
)

// TestExecFillLooksLessOnceFound: a run's connections are looked up every
// execFillLookup until one is found, then every execFillRefresh. The
// "client" is a child holding one end of a socketpair whose other end
// this process, the "server", holds. Over a second of that run, lookups
// every 20 ms would be some 50; at most 1000/250 + 1 after the first find,
// plus the few before it, are allowed.
func TestExecFillLooksLessOnceFound(t *testing.T) {
	f := startExecFill(t.Context(), model.FillSourceKernel)
	defer f.stop()
	if !f.measuring() {
		t.Skipf("no sampler here: %v", f.err)
	}
	_, client := clientHolding(t, "sleep", "30")
	r := f.watch(os.Getpid())
	r.started(client)
	time.Sleep(time.Second)
	r.finish(false)
	r.mu.Lock()
	found, lookups := r.found, r.lookups
	r.mu.Unlock()
	if !found {
		t.Fatalf("the connection to the client was not found in %d lookups: %+v", lookups, r.why)
	}
	if lookups > 10 {
		t.Errorf("%d lookups in a second after the connection was found, want at most 10 (every %v)", lookups, execFillRefresh)
	}
}

// TestExecFillInKernel: where the kernel's fill programs load, an exec
// run's fill over a unix connection is measured there, as a live side's
// is, and the run says so; the sampler does not start. This process is
// the "server", writing to a child that reads its end of a socketpair.
func TestExecFillInKernel(t *testing.T) {
	f := startExecFill(t.Context(), model.FillSourceKernel)
	defer f.stop()
	if f.kern == nil {
		t.Skip("the kernel's fill programs do not load here (nbdscope doctor says why)")
	}
	server, client := clientHolding(t, "sh", "-c", "cat <&3 >/dev/null")
	r := f.watch(os.Getpid())
	r.started(client)
	buf := make([]byte, 64<<10)
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); {
		if _, err := unix.Write(server, buf); err != nil {
			t.Fatal(err)
		}
	}
	fl, why, src := r.finish(false)
	if src != "kernel" || !fl.Known() || why != nil {
		t.Errorf("fill %+v (%+v) measured by %q, want known, by the kernel", fl, why, src)
	}
	if f.smp != nil {
		t.Error("the sampler started for a run the kernel measured")
	}
}

// TestExecFillSamplerAsked: --fill-source sampler has an exec sweep
// sample its runs' fill, the kernel's programs not loaded.
func TestExecFillSamplerAsked(t *testing.T) {
	f := startExecFill(t.Context(), model.FillSourceSampler)
	defer f.stop()
	if f.kern != nil {
		t.Error("the kernel's fill programs loaded where the sampler was asked for")
	}
}

// clientHolding starts argv as a "client" holding one end of a socketpair
// on its fd 3 and returns the other end, this process's (the "server"),
// and the client's pid; both are gone when the test ends.
func clientHolding(t *testing.T, argv ...string) (server, client int) {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(pair[0]) })
	end := os.NewFile(uintptr(pair[1]), "client end")
	defer end.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = []*os.File{end}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return pair[0], cmd.Process.Pid
}
