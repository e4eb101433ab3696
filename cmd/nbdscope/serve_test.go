package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"nbdscope/internal/testbin"
	"nbdscope/model"
	"nbdscope/nbd"
)

// `nbdscope serve` as a real process (issue 6): crash safety of the file
// backend, socket permissions, loopback by default. The test binary doubles
// as nbdscope: with asBinaryEnv set it runs the command line instead of
// the tests.
const asBinaryEnv = "NBDSCOPE_TEST_AS_BINARY"

func TestMain(m *testing.M) {
	if os.Getenv(asBinaryEnv) == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// serveProc is `nbdscope serve …` running as a child process.
type serveProc struct {
	cmd    *exec.Cmd
	out    *testbin.SyncBuffer
	exited chan struct{}
	err    error
}

// startServeProc starts `nbdscope serve args…` and waits (bounded) until it
// prints its listening line. It is killed at the end of the test.
func startServeProc(t *testing.T, args ...string) *serveProc {
	t.Helper()
	p, ok := tryStartServeProc(t, args...)
	if !ok {
		t.Fatalf("serve %v exited during start (%v):\n%s", args, p.err, p.out)
	}
	return p
}

// tryStartServeProc is startServeProc that, should the child exit during
// start, returns it (its output and error complete) and false instead of
// failing the test.
func tryStartServeProc(t *testing.T, args ...string) (*serveProc, bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), asBinaryEnv+"=1")
	out := &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childAttrs()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, out: out, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	deadline := time.After(15 * time.Second)
	for !strings.Contains(out.String(), "listening on") {
		select {
		case <-p.exited:
			if !strings.Contains(out.String(), "listening on") {
				return p, false
			}
		case <-deadline:
			t.Fatalf("serve %v did not start within 15s:\n%s", args, out)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return p, true
}

// addrInUse tells output that says an address was in use (Unix, Windows).
func addrInUse(out string) bool {
	return strings.Contains(out, "address already in use") ||
		strings.Contains(out, "Only one usage of each socket address")
}

func dialUnix(t *testing.T, sock string) *nbd.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := nbd.Dial(ctx, nbd.URI{Transport: "unix", Socket: sock}, nbd.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestServeFileSurvivesKill9 writes through `serve --backend file:PATH`,
// FLUSHes, keeps writing, and kills the server with SIGKILL while writes
// are in flight. The file must hold everything acknowledged before the
// acknowledged FLUSH; what was being written at the kill is, per 4 KiB block,
// either the old or the new data; writes acknowledged before the kill are
// there too (the page cache survives a process crash). A new server on the
// same (now stale) socket path then serves the same data.
func TestServeFileSurvivesKill9(t *testing.T) {
	const (
		size  = 16 << 20
		slot  = 64 << 10 // each write lies within one slot
		block = 4 << 10
		depth = 16
	)
	dir := testbin.ShortDir(t)
	img, sock := filepath.Join(dir, "disk.img"), filepath.Join(dir, "s.sock")
	if err := os.WriteFile(img, nil, 0o644); err != nil { // nbdscope never creates an image; an empty one it sizes
		t.Fatal(err)
	}
	srv := startServeProc(t, "-k", sock, "--backend", "file:"+img, "--size", "16m")
	c := dialUnix(t, sock)
	defer c.Close()

	rng := rand.New(rand.NewPCG(9, 9))
	slots := rng.Perm(size / slot)
	// Write data is cut from a pool of random bytes at random places
	// (generating it byte by byte is slow under -race).
	pool := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{9}).Read(pool)
	type write struct {
		off  int64
		data []byte
	}
	newWrite := func(s int) write {
		n := block * (1 + rng.IntN(slot/block))
		at := rng.IntN(len(pool) - n)
		return write{off: int64(s*slot + block*rng.IntN((slot-n)/block+1)), data: pool[at : at+n]}
	}
	// Phase 1: writes to half the slots, all acknowledged, then FLUSH.
	flushed := make([]byte, size)
	var phase1 []write
	for _, s := range slots[:len(slots)/2] {
		phase1 = append(phase1, newWrite(s))
	}
	for i := 0; i < len(phase1); i += depth {
		var ops []*nbd.Op
		for _, w := range phase1[i:min(i+depth, len(phase1))] {
			op := nbd.NewOp()
			op.Cmd, op.Offset, op.Buf = nbd.CmdWrite, uint64(w.off), w.data
			if err := c.Start(op); err != nil {
				t.Fatal(err)
			}
			ops = append(ops, op)
		}
		for _, op := range ops {
			if err := op.Wait(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, w := range phase1 {
		copy(flushed[w.off:], w.data)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}

	// Phase 2: unflushed writes to every slot (each written once), 16 in
	// flight, until SIGKILL.
	var phase2 []write
	for _, s := range slots {
		phase2 = append(phase2, newWrite(s))
	}
	acked := make([]atomic.Bool, len(phase2))
	var nacked atomic.Int32
	stop := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		sem := make(chan struct{}, depth)
		var wg sync.WaitGroup
		defer wg.Wait()
		for i, w := range phase2 {
			select {
			case <-stop:
				return
			case sem <- struct{}{}:
			}
			op := nbd.NewOp()
			op.Cmd, op.Offset, op.Buf = nbd.CmdWrite, uint64(w.off), w.data
			if c.Start(op) != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if op.Wait() == nil {
					acked[i].Store(true)
					nacked.Add(1)
				}
				<-sem
			}()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for nacked.Load() < int32(len(phase2)/4) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	srv.cmd.Process.Signal(syscall.SIGKILL)
	<-srv.exited
	close(stop)
	select {
	case <-writerDone:
	case <-time.After(10 * time.Second):
		t.Fatal("requests in flight did not complete after the server died")
	}
	if c.Err() == nil {
		t.Fatal("client did not notice the server's death")
	}
	t.Logf("killed after %d of %d unflushed writes were acknowledged", nacked.Load(), len(phase2))

	got, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != size {
		t.Fatalf("file is %d bytes, want %d", len(got), size)
	}
	// Expected content per 4 KiB block: the flushed image, except where a
	// phase-2 write went (old or new if unacknowledged, new if acknowledged).
	newAt := make(map[int64][]byte)
	mustNew := make(map[int64]bool)
	for i, w := range phase2 {
		for o := int64(0); o < int64(len(w.data)); o += block {
			newAt[w.off+o] = w.data[o : o+block]
			mustNew[w.off+o] = acked[i].Load()
		}
	}
	lostFlushed, lostAcked, torn := 0, 0, 0
	for off := int64(0); off < size; off += block {
		g, old := got[off:off+block], flushed[off:off+block]
		nw, touched := newAt[off]
		switch {
		case !touched:
			if !bytes.Equal(g, old) {
				lostFlushed++
			}
		case mustNew[off]:
			if !bytes.Equal(g, nw) {
				lostAcked++
			}
		default:
			if !bytes.Equal(g, old) && !bytes.Equal(g, nw) {
				torn++
			}
		}
	}
	if lostFlushed+lostAcked+torn != 0 {
		t.Fatalf("after kill -9: %d blocks lost flushed data, %d lost acknowledged writes, %d hold neither old nor new data",
			lostFlushed, lostAcked, torn)
	}

	// A new server takes over the stale socket and serves the same bytes.
	if _, err := os.Lstat(sock); err != nil {
		t.Logf("socket gone after kill -9: %v", err)
	}
	startServeProc(t, "-k", sock, "--backend", "file:"+img, "--size", "0")
	c2 := dialUnix(t, sock)
	defer c2.Close()
	back := make([]byte, size)
	if _, err := c2.ReadAt(back, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, got) {
		t.Fatal("the restarted server does not serve the file's contents")
	}
}

// TestServeUnixSocketIs0600: `serve -k` creates its socket 0600.
func TestServeUnixSocketIs0600(t *testing.T) {
	dir := testbin.ShortDir(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	startServeProc(t, "-k", sock, "--backend", "null", "--size", "1m")
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want srw-------", fi.Mode())
	}
	c := dialUnix(t, sock)
	c.Close()
}

// TestServeWarnsBeyondLoopback: --listen on anything but a loopback address
// prints a warning before binding. The addresses use port 99999, which no
// socket accepts, so nothing is ever bound beyond loopback: the command
// warns, then refuses the port (a bad value: exit 2).
func TestServeWarnsBeyondLoopback(t *testing.T) {
	const warning = "warning: listening on"
	for _, tc := range []struct {
		addr string
		warn bool
	}{
		{"0.0.0.0:99999", true},
		{"[::]:99999", true},
		{":99999", true},
		{"192.0.2.1:99999", true},
		{"[2001:db8::1]:99999", true},
		{"example.com:99999", true},
		{"127.0.0.1:99999", false},
		{"127.1.2.3:99999", false},
		{"[::1]:99999", false},
		{"localhost:99999", false},
	} {
		code, _, stderr := storeCmdRun(t, "", "serve", "--listen", tc.addr, "--backend", "null", "--size", "1m")
		if code != exitUsage {
			t.Errorf("--listen %s: exit %d, want 2 (the port is invalid)\n%s", tc.addr, code, stderr)
		}
		if got := strings.Contains(stderr, warning); got != tc.warn {
			t.Errorf("--listen %s: warning printed %v, want %v\n%s", tc.addr, got, tc.warn, stderr)
		}
	}
}

// TestServeDefaultListenIsLoopback: without --socket or --listen, serve
// listens on 127.0.0.1:10809 only, without a warning. Skipped when the port
// is taken (before the test, or by another process between the check and
// the child's bind).
func TestServeDefaultListenIsLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:10809")
	if err != nil {
		t.Skipf("port 10809 is in use: %v", err)
	}
	ln.Close()
	p, ok := tryStartServeProc(t, "--backend", "null", "--size", "1m")
	if !ok {
		if addrInUse(p.out.String()) {
			t.Skipf("port 10809 was taken by another process before serve could bind it:\n%s", p.out)
		}
		t.Fatalf("serve exited during start (%v):\n%s", p.err, p.out)
	}
	out := p.out.String()
	if !regexp.MustCompile(`listening on nbd://127\.0\.0\.1(:10809)?/`).MatchString(out) || strings.Contains(out, "warning") {
		t.Fatalf("serve output:\n%s", out)
	}
	// The kernel's view: a listener on 127.0.0.1:10809 and none on a
	// wildcard address.
	local, wildcard := false, false
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 4 || fs[3] != "0A" || !strings.HasSuffix(fs[1], fmt.Sprintf(":%04X", 10809)) {
				continue
			}
			switch strings.TrimSuffix(fs[1], fmt.Sprintf(":%04X", 10809)) {
			case "0100007F":
				local = true
			case "00000000", "00000000000000000000000000000000":
				wildcard = true
			}
		}
	}
	if _, err := os.Stat("/proc/net/tcp"); err == nil && (!local || wildcard) {
		t.Fatalf("listeners on port 10809: loopback %v, wildcard %v", local, wildcard)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := nbd.Dial(ctx, nbd.URI{Transport: "tcp", Host: "127.0.0.1", Port: 10809}, nbd.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("dial timed out")
	}
}

// TestServeSizeDefault: without --size an export is 1g, and a file:
// image is served at its own size (asking for another is refused, so 1g
// would have refused every image that is not 1 GiB).
func TestServeSizeDefault(t *testing.T) {
	for _, c := range []struct {
		backend, size string
		want          int64
	}{
		{"memory", "", 1 << 30},
		{"null", "2m", 2 << 20},
		{"file:/tmp/x.img", "", 0},
		{"file:/tmp/x.img", "0", 0},
		{"file:/tmp/x.img", "64m", 64 << 20},
	} {
		f := serveFlags{backend: c.backend, size: c.size, fill: "0xff", sndbuf: "default", maxConns: 1}
		size, _, _, err := f.parse()
		if err != nil || size != c.want {
			t.Errorf("--backend %s --size %q: %d, %v; want %d", c.backend, c.size, size, err, c.want)
		}
	}
}

// TestRunServesImageAtItsSize: a side whose backend is an existing file:
// image and whose size is not given serves the image at its own size (the
// default 64g was refused for every image); a size given is kept, and the
// other side keeps the default.
func TestRunServesImageAtItsSize(t *testing.T) {
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, make([]byte, 3<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want int64
	}{
		{[]string{"--backend-b", "file:" + img}, 3 << 20},
		{[]string{"--backend-b", "file:" + img, "--size-b", "1m"}, 1 << 20},
		{[]string{"--backend", "file:" + img, "--size", "2m"}, 2 << 20},
	} {
		cmd := &cobra.Command{Use: "run"}
		lf := addLoadFlags(testApp(), cmd, true)
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := lf.apply(model.DefaultConfig())
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if cfg.Sides[1].Size != c.want {
			t.Errorf("%q: side B size %d, want %d", c.args, cfg.Sides[1].Size, c.want)
		}
		if c.args[0] == "--backend-b" && cfg.Sides[0].Size != model.DefaultConfig().Sides[0].Size {
			t.Errorf("%q: side A size %d changed", c.args, cfg.Sides[0].Size)
		}
	}
}

// TestServeStatsForm: help shows --stats[=INTERVAL], the form that works;
// '--stats 500ms' says to type --stats=500ms, and '--stats=' is refused
// rather than taken as off (issue 21 item 8).
func TestServeStatsForm(t *testing.T) {
	_, out, _ := runApp(t, "serve", "--help")
	if !strings.Contains(out, "--stats[=INTERVAL] ") {
		t.Errorf("serve --help does not show --stats[=INTERVAL]:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--stats", "500ms"}, "the --stats interval follows '=': --stats=500ms"},
		{[]string{"serve", "--stats="}, "--stats=: want an interval from 100ms to 1h"},
		{[]string{"serve", "--stats=1ns"}, "--stats=1ns: want an interval from 100ms to 1h"},
	} {
		code, _, errs := runBin(t, append(c.args, "-k", filepath.Join(testbin.ShortDir(t), "s.sock"))...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// TestServeStatsJSONVersion: the --stats-json file carries nbdscope_version
// beside its version, as every JSON output does.
func TestServeStatsJSONVersion(t *testing.T) {
	dir := testbin.ShortDir(t)
	sock, file := filepath.Join(dir, "s.sock"), filepath.Join(dir, "stats.json")
	srv := startServeProc(t, "-k", sock, "--backend", "null", "--size", "1m", "--stats=200ms", "--stats-json", file)
	c := dialUnix(t, sock)
	if _, err := c.ReadAt(make([]byte, 64<<10), 0); err != nil {
		t.Fatal(err)
	}
	c.Close()
	srv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-srv.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit on SIGTERM")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no --stats-json file: %v\n%s", err, srv.out)
	}
	var s struct {
		Version  int     `json:"version"`
		Nbdscope *string `json:"nbdscope_version"`
	}
	if err := json.Unmarshal(data, &s); err != nil || s.Version != 1 || s.Nbdscope == nil || *s.Nbdscope != model.Version {
		t.Errorf("--stats-json: %v, version %d, nbdscope_version %v; want %q:\n%s", err, s.Version, s.Nbdscope, model.Version, data)
	}
}
