package interop

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"nbdscope/internal/testbin"
	"nbdscope/model"
)

// TestLocalTargetBuffersLive: side B targets a qemu-nbd the test started,
// which serves another client too. A live sndbuf change reaches qemu-nbd's
// socket to our load (an independent getsockopt on a copy of it reads
// 4m) and only that one: the other client's connection keeps its buffer,
// the event says it reached 1 socket. The report names the process (PID
// and command) and its own buffer, and default gives the socket its own
// value back.
func TestLocalTargetBuffersLive(t *testing.T) {
	need(t, "qemu-nbd")
	sock, pid := startOwnQemuNbd(t)
	other, err := net.Dial("unix", sock) // another client of the same server
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	one4m := func(bufs []sockBufs) bool {
		n := 0
		for _, b := range bufs {
			if b.snd == 4<<20 {
				n++
			}
		}
		return n == 1 && len(bufs) >= 2
	}
	marker := "-k " + sock
	rep, r, seen, last := runWatching(t, marker, one4m, "--target-b", "nbd+unix:///?socket="+sock, "--sndbuf-b", "default",
		"--mode", "concurrent", "--at", "2s:b.sndbuf=2m", "--at", "4s:b.sndbuf=default", "--duration", "5s")
	if !seen {
		t.Errorf("want exactly one of qemu-nbd's data sockets (ours, beside the other client's) at SO_SNDBUF 4m; last look: %+v\n%s", last, r)
	}
	set := eventOf(rep, "B", model.SetSndBuf)
	var first *model.Event
	for i, e := range rep.Events {
		if e.Side == "B" && e.Setting == model.SetSndBuf && e.To == "2m" {
			first = &rep.Events[i]
		}
	}
	if first == nil || first.Effective != 4<<20 || first.Reached == nil || *first.Reached != 1 {
		t.Fatalf("want B's sndbuf event with 4m read back from our 1 socket (not the other client's): %+v\n%s", first, r)
	}
	b := rep.Sides[1].Summary
	if b.TargetServer == nil || b.TargetServer.PID != pid || !strings.HasPrefix(b.TargetServer.Command, "qemu-nbd ") {
		t.Errorf("the report does not name the target's server PID %d and command: %+v", pid, b.TargetServer)
	}
	if own := b.SndBuf.ServerOwn; own <= 0 || set == nil || set.To != "default" || set.Effective != own {
		t.Errorf("default should give qemu-nbd's socket its own buffer %d back: %+v", own, set)
	}
	if len(b.Settings.SndBuf) == 0 || b.Settings.SndBuf == "external" {
		t.Errorf("a measured target's stamp %q: want its request, not external", b.Settings.SndBuf)
	}
}

// TestLocalTargetOtherUserRefused: nbdscope as nobody, against root's
// qemu-nbd: the target's server cannot be looked at, so a change of its
// buffer is refused, the warning names why, and the run goes on.
func TestLocalTargetOtherUserRefused(t *testing.T) {
	need(t, "qemu-nbd")
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run nbdscope as another user")
	}
	sock, _ := startOwnQemuNbd(t)
	dir, err := os.MkdirTemp("", "nbdscope-nobody")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// nobody reaches the socket: its directories (the test's own, never
	// the system's temporary directory) are opened up.
	open := []string{filepath.Dir(sock)}
	if up := filepath.Dir(filepath.Dir(sock)); up != filepath.Clean(os.TempDir()) && up != "/" {
		open = append(open, up)
	}
	for _, d := range open {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range []error{os.Chmod(dir, 0o777), os.Chmod(sock, 0o777)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "nbdscope")
	if b, err := os.ReadFile(nbdscopeBin); err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatalf("copying nbdscope for nobody: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--target-b", "nbd+unix:///?socket="+sock, "--at", "1s:b.sndbuf=2m", "--duration", "2s")
	cmd.Env = append(os.Environ(), "NBDSCOPE_HOME="+dir, "HOME="+dir)
	cmd.SysProcAttr = testbin.AsNobody(nil)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("want exit 0 (the change is refused, the run goes on): %v\n%s", err, out)
	}
	for _, want := range []string{"b.sndbuf=2m failed: sndbuf: side B targets", "whose buffers cannot be changed: ", "another user's"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("want the refusal with its reason (%q):\n%s", want, out)
		}
	}
}
