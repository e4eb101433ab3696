package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"nbdscope/model"
)

// startPeer runs a real NBD server (nbdkit, qemu-nbd) on a unix socket for
// the test's life and returns its URI.
func startPeer(t *testing.T, sock string, name string, args ...string) string {
	t.Helper()
	needTool(t, name)
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	for i := 0; i < 200; i++ {
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return "nbd+unix:///?socket=" + sock
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s did not create %s", name, sock)
	return ""
}

// External targets: side A reads a real nbdkit pattern export with
// verification, side B a real qemu-nbd; only the client side is measured.
func TestExternalTargets(t *testing.T) {
	dir, err := os.MkdirTemp("", "nbde")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	a := startPeer(t, filepath.Join(dir, "k.sock"), "nbdkit", "-U", filepath.Join(dir, "k.sock"), "-f", "pattern", "1G")
	b := startPeer(t, filepath.Join(dir, "q.sock"), "qemu-nbd", "--image-opts", "driver=null-co,size=1G", "-k", filepath.Join(dir, "q.sock"), "-t", "-r", "-e", "4")

	cfg := testConfig()
	cfg.Sides[0].Target, cfg.Sides[0].Verify = a, true
	cfg.Sides[1].Target = b
	cfg.Sides[1].Connections = 2
	p := startPair(t, cfg)
	for _, side := range []string{"A", "B"} {
		u := waitFor(t, p, 10*time.Second, side+" sample", activeSample(model.SideID(side)))
		s := u.Sample
		if s.Server != nil || s.SndBuf.ServerRequested != "external" || s.SndBuf.ServerEffective != 0 {
			t.Fatalf("%s: server figures for an external target: %+v", side, s)
		}
		if !s.Client.RecvCallsPer2MiB.Known() || s.ErrorCount() != 0 {
			t.Fatalf("%s: %+v", side, s)
		}
	}
	if err := applyText(p, 0, model.SetSndBuf, "2m"); err == nil {
		t.Fatal("server sndbuf of an external target accepted")
	}
	if err := applyText(p, 0, model.SetRequestSize, "1m"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, 5*time.Second, "A after the change", activeSample("A"))
	rep := p.Report()
	if rep.Sides[0].Summary.Server != nil || rep.Sides[0].Summary.ErrorCount() != 0 {
		t.Fatalf("A summary: %+v", rep.Sides[0].Summary)
	}
}
