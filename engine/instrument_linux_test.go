package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"nbdscope/nbd"
)

// These tests hold the engine's instrumentation against independent
// instruments: the load process's own count of receive and send calls
// against `strace -f -c`, and its getrusage CPU against /usr/bin/time.

// serveNull serves a null export on a unix socket for the test's life.
func serveNull(t *testing.T, sndbuf int) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nbdi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	ln, err := nbd.ListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &nbd.Server{Exports: []nbd.Export{{Backend: nbd.NewNull(64<<30, 0xff)}}}
	if sndbuf > 0 {
		srv.SetSocketBuffer(nbd.SendBuf, sndbuf)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return nbd.URI{Transport: "unix", Socket: sock}.String()
}

// loadUnder runs a load child under the given command prefix for d, then
// pauses it (draining every request), polls its counters and stops it.
func loadUnder(t *testing.T, prefix []string, uri string, d time.Duration) childMsg {
	t.Helper()
	spec, _ := json.Marshal(loadSpec{URI: uri, Connections: 1, RequestSize: 2 << 20, InFlight: 8, Workload: WorkRead, ReadPercent: 100})
	args := append(append([]string{}, prefix[1:]...), os.Args[0], ChildCommand, RoleLoad, string(spec))
	cmd := exec.Command(prefix[0], args...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan childMsg, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m childMsg
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	next := func(what string) childMsg {
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatalf("load child ended before %s", what)
			}
			if m.Type == "error" {
				t.Fatalf("load child: %s", m.Err)
			}
			return m
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s from the load child", what)
		}
		return childMsg{}
	}
	next("ready")
	time.Sleep(d)
	io.WriteString(stdin, `{"op":"set","seq":1,"setting":"paused","value":"true"}`+"\n")
	next("pause reply")
	io.WriteString(stdin, `{"op":"poll","seq":2}`+"\n")
	m := next("poll reply")
	io.WriteString(stdin, `{"op":"stop"}`+"\n")
	stdin.Close()
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("load child: %v", err)
	}
	return m
}

// straceCalls parses `strace -c` output: calls (errors included) per syscall.
func straceCalls(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 5 || f[0] == "%" || strings.HasPrefix(f[0], "-") || f[len(f)-1] == "total" {
			continue
		}
		name := f[len(f)-1]
		// columns: %time seconds usecs/call calls [errors] syscall
		calls, err := strconv.ParseUint(f[3], 10, 64)
		if err != nil {
			continue
		}
		out[name] = calls
	}
	return out
}

func within(a, b uint64, tol float64) bool {
	if b == 0 {
		return a == 0
	}
	d := float64(a) - float64(b)
	if d < 0 {
		d = -d
	}
	return d/float64(b) <= tol
}

func TestSyscallCountsAgreeWithStrace(t *testing.T) {
	needTool(t, "strace")
	for _, sndbuf := range []int{0, 2 << 20} {
		t.Run(fmt.Sprintf("sndbuf=%d", sndbuf), func(t *testing.T) {
			uri := serveNull(t, sndbuf)
			out := filepath.Join(t.TempDir(), "strace.txt")
			m := loadUnder(t, []string{"strace", "-f", "-c", "-o", out, "-e", "trace=read,write,writev"}, uri, 2*time.Second)
			st := straceCalls(t, out)
			io := m.Counters.IO
			ours := io.RecvCalls + io.RecvEAGAIN
			// strace also sees the few reads of the command pipe and the
			// close of the connection, and the writes of the replies.
			// strace also sees the command pipe's reads and the final EOF:
			// a handful, which matter only when the run was short.
			if !within(ours, st["read"], 0.03) && absDiff(ours, st["read"]) > 20 {
				t.Errorf("receive calls: engine %d (+%d EAGAIN = %d), strace read %d: off by more than 3%%", io.RecvCalls, io.RecvEAGAIN, ours, st["read"])
			}
			// Sends are few (one request header each) and strace also sees
			// the child's replies on its stdout: allow 3% or 10 calls.
			oursSend := io.SendCalls + io.SendEAGAIN
			if theirs := st["write"] + st["writev"]; !within(oursSend, theirs, 0.03) && absDiff(oursSend, theirs) > 10 {
				t.Errorf("send calls: engine %d, strace write+writev %d", oursSend, st["write"]+st["writev"])
			}
			t.Logf("engine: recv %d + EAGAIN %d = %d, send %d; strace: read %d, write %d, writev %d; payload %d MiB",
				io.RecvCalls, io.RecvEAGAIN, ours, oursSend, st["read"], st["write"], st["writev"], m.Bytes>>20)
			if m.Bytes == 0 || io.RecvCalls == 0 {
				t.Fatal("no load")
			}
		})
	}
}

func TestCPUAgreesWithTime(t *testing.T) {
	needTool(t, "/usr/bin/time")
	uri := serveNull(t, 0)
	out := filepath.Join(t.TempDir(), "time.txt")
	m := loadUnder(t, []string{"/usr/bin/time", "-f", "%U %S", "-o", out}, uri, 3*time.Second)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		t.Fatalf("time said %q", b)
	}
	u, _ := strconv.ParseFloat(f[len(f)-2], 64)
	s, _ := strconv.ParseFloat(f[len(f)-1], 64)
	ours := m.Counters.UserS + m.Counters.SysS
	theirs := u + s
	t.Logf("engine getrusage: user %.2f sys %.2f = %.2f s; /usr/bin/time: user %.2f sys %.2f = %.2f s", m.Counters.UserS, m.Counters.SysS, ours, u, s, theirs)
	// time also sees the shutdown after our last poll; allow 5% and the
	// 10 ms resolution of its report.
	if d := theirs - ours; d < -0.02 || d > 0.05*theirs+0.02 {
		t.Errorf("CPU: engine %.3f s, /usr/bin/time %.3f s: off by more than 5%%", ours, theirs)
	}
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}
