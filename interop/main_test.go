package interop

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/nbd"
	"nbdscope/platform/syscount"
	"nbdscope/shellword"
)

// Bounds that keep a broken tool or server from hanging the suite.
const (
	cmdTimeout   = 60 * time.Second // any one external command
	startTimeout = 15 * time.Second // a server's socket must accept by then (patient: CI runs every package at once)
	stopTimeout  = 15 * time.Second // SIGTERM → exit, else SIGKILL
	procLifetime = 5 * time.Minute  // hard cap on a server child
	mib          = 1 << 20
	exportSize   = 64 * mib // the default export of startServe
)

// nbdscopeBin is the binary TestMain builds.
var nbdscopeBin string

func TestMain(m *testing.M) { testbin.Main(m, "nbdscope-interop-", &nbdscopeBin) }

// need skips the test when a tool is missing, or fails it when
// NBDSCOPE_INTEROP=1 asks for every interop test to run.
func need(t testing.TB, tools ...string) {
	t.Helper()
	testbin.Need(t, "apt-get install qemu-utils libnbd-bin nbdkit fio", tools...)
}

// needCounting skips a test whose figures are counted system calls where
// they cannot be counted (syscount.Probe says why), or fails it under
// NBDSCOPE_INTEROP=1, as syscount's own tests do: CI mounts tracefs, and
// a skip there would pass the agreement tests unrun.
func needCounting(t testing.TB) {
	t.Helper()
	if err := syscount.Probe(); err != nil {
		testbin.Require(t, fmt.Errorf("system calls cannot be counted here: %w", err))
	}
}

// result is what an external command did.
type result struct {
	cmdline string
	out     string // stdout and stderr, interleaved
	code    int    // exit status
}

func (r result) String() string {
	return fmt.Sprintf("$ %s\n[exit %d]\n%s", r.cmdline, r.code, r.out)
}

// run runs an external command in dir ("" = the test's directory) with a
// timeout and returns its combined output and exit status. A command that
// cannot start or times out fails the test.
func run(t testing.TB, dir, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r := result{cmdline: shellword.Join(append([]string{name}, args...)), out: string(out)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("timed out after %v:\n%s", time.Since(start).Round(time.Millisecond), r)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", r.cmdline, err)
	}
	return r
}

// mustRun is run that fails the test unless the command exits 0.
func mustRun(t testing.TB, dir, name string, args ...string) result {
	t.Helper()
	r := run(t, dir, name, args...)
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%s", r)
	}
	return r
}

// waitOutput waits until p's output holds a whole line containing want
// and returns the output so far. The wait is bounded by cmdTimeout and by
// p's life: output that never comes fails the test, never passes as empty.
func waitOutput(t testing.TB, p *proc, want string) string {
	t.Helper()
	deadline := time.After(cmdTimeout)
	for exited := false; ; {
		out := p.out.String()
		if i := strings.Index(out, want); i >= 0 && strings.Contains(out[i:], "\n") {
			return out
		}
		if exited { // its output is complete
			t.Fatalf("%s exited (%v) before writing %q:\n%s", p.cmdline, p.waitErr, want, out)
		}
		select {
		case <-p.exited:
			exited = true
		case <-deadline:
			t.Fatalf("%s did not write %q within %v:\n%s", p.cmdline, want, cmdTimeout, p.out)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// proc is a server running as a child process.
type proc struct {
	name    string
	cmdline string
	cmd     *exec.Cmd
	out     *testbin.SyncBuffer
	exited  chan struct{} // closed when Wait returned
	waitErr error
	spec    procSpec
	cancel  func()
	stopped bool
}

// stop ends the server: SIGTERM, up to stopTimeout, then SIGKILL. For
// nbdscope it checks the clean exit (status 0) and the removal of the socket
// file.
// cleanup is true when called at the end of the test, where an earlier
// exit is an error.
func (p *proc) stop(t testing.TB, cleanup bool) {
	t.Helper()
	if p.stopped {
		return
	}
	p.stopped = true
	defer p.cancel()
	select {
	case <-p.exited:
		if cleanup {
			t.Errorf("%s exited before the end of the test (%v):\n%s", p.cmdline, p.waitErr, p.out)
			return
		}
	default:
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
		p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("%s did not exit within %v of SIGTERM; killed. Output:\n%s", p.cmdline, stopTimeout, p.out)
		return
	}
	if p.spec.ours {
		if p.waitErr != nil {
			t.Errorf("%s: after SIGTERM want exit status 0, got %v. Output:\n%s", p.cmdline, p.waitErr, p.out)
		}
		if p.spec.network == "unix" {
			if _, err := os.Lstat(p.spec.address); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: socket %s still there after a clean exit (lstat: %v)", p.cmdline, p.spec.address, err)
			}
		}
	}
	if t.Failed() {
		t.Logf("output of %s:\n%s", p.cmdline, p.out)
	}
}

type procSpec struct {
	name string
	args []string
	// network and address the server accepts connections on when ready.
	network, address string
	// ours: the child is nbdscope serve, so a clean exit after SIGTERM is
	// required (status 0) and, for a unix socket, the socket file must be
	// gone afterwards.
	ours bool
}

// startProc starts a server, waits (bounded) until it accepts connections
// and registers its shutdown: SIGTERM, up to stopTimeout, then SIGKILL.
// For nbdscope serve on TCP port 0 (spec.address "HOST:0"), the address is
// the one the server says it listens on, and p.spec.address holds it.
func startProc(t testing.TB, spec procSpec) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procLifetime)
	cmd := exec.CommandContext(ctx, spec.name, spec.args...)
	out := &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = stopTimeout
	// Should the test binary die, take the server along (Linux).
	cmd.SysProcAttr = childProcAttr()
	p := &proc{name: filepath.Base(spec.name), cmdline: shellword.Join(append([]string{spec.name}, spec.args...)), cmd: cmd, out: out, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", p.cmdline, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()

	p.spec, p.cancel = spec, cancel
	t.Cleanup(func() { p.stop(t, true) })

	if spec.ours && spec.network == "tcp" && strings.HasSuffix(spec.address, ":0") {
		spec.address = boundAddr(t, p)
		p.spec.address = spec.address
	}
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-p.exited:
			p.stopped = true
			p.cancel()
			t.Fatalf("%s exited during startup (%v):\n%s", p.cmdline, p.waitErr, out)
		default:
		}
		c, err := net.DialTimeout(spec.network, spec.address, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			p.stopped = true
			p.cmd.Process.Kill()
			<-p.exited
			p.cancel()
			t.Fatalf("%s: %s %s does not accept connections after %v (%v). Output:\n%s",
				p.cmdline, spec.network, spec.address, startTimeout, err, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// server is an `nbdscope serve` child.
type server struct {
	*proc
	dir  string // short temporary directory holding the socket
	sock string
	// uri reaches the export; name is the export name.
	uri, name string
}

// startServe runs `nbdscope serve -k DIR/s.sock --backend memory --size 64m`
// with extra flags appended (later flags override earlier ones).
func startServe(t testing.TB, extra ...string) *server {
	t.Helper()
	dir := testbin.ShortDir(t)
	sock := filepath.Join(dir, "s.sock")
	args := append([]string{"serve", "-k", sock, "--backend", "memory", "--size", "64m"}, extra...)
	name := flagValue(extra, "--export", "-x")
	p := startProc(t, procSpec{name: nbdscopeBin, args: args, network: "unix", address: sock, ours: true})
	return &server{proc: p, dir: dir, sock: sock, name: name, uri: unixURI(sock, name)}
}

// flagValue returns the last value given for any of names in args.
func flagValue(args []string, names ...string) string {
	v := ""
	for i := 0; i < len(args); i++ {
		for _, n := range names {
			if args[i] == n && i+1 < len(args) {
				v = args[i+1]
			}
			if strings.HasPrefix(args[i], n+"=") {
				v = strings.TrimPrefix(args[i], n+"=")
			}
		}
	}
	return v
}

// unixURI is nbd+unix:///NAME?socket=SOCK.
func unixURI(sock, export string) string {
	return "nbd+unix:///" + url.PathEscape(export) + "?socket=" + sock
}

// boundAddr returns the HOST:PORT that the nbdscope serve child p says it
// listens on ("nbdscope serve: listening on nbd://HOST[:PORT]/"), so a test
// can have it bind port 0 instead of guessing a free port (a port found free
// and closed again can be taken before the child binds it).
func boundAddr(t testing.TB, p *proc) string {
	t.Helper()
	const prefix = "nbdscope serve: listening on "
	out := waitOutput(t, p, prefix)
	line := out[strings.Index(out, prefix)+len(prefix):]
	line = strings.TrimSpace(line[:strings.IndexByte(line, '\n')])
	u, err := nbd.ParseURI(line)
	if err != nil || u.Transport != "tcp" || u.Port == 0 {
		t.Fatalf("%s: cannot tell the address from %q (%v):\n%s", p.cmdline, line, err, out)
	}
	return net.JoinHostPort(u.Host, strconv.Itoa(u.Port))
}

// writeRandomImage creates a raw image of size bytes at path: random data,
// with every fourth MiB left as a hole and every seventh written as zeroes,
// so that copies exercise both data and zero handling. It returns the
// contents.
func writeRandomImage(t testing.TB, path string, size int64, seed uint64) []byte {
	t.Helper()
	data := make([]byte, size)
	rng := rand.New(rand.NewChaCha8(seedBytes(seed)))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < size; off += mib {
		n := min(int64(mib), size-off)
		chunk := data[off : off+n]
		switch i := off / mib; {
		case i%4 == 3:
			continue // hole
		case i%7 == 6:
			// explicit zeroes
		default:
			fillRandom(rng, chunk)
		}
		if _, err := f.WriteAt(chunk, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return data
}

func seedBytes(seed uint64) [32]byte {
	var s [32]byte
	for i := range 4 {
		v := seed + uint64(i)*0x9e3779b97f4a7c15
		for j := range 8 {
			s[8*i+j] = byte(v >> (8 * j))
		}
	}
	return s
}

func fillRandom(rng *rand.Rand, p []byte) {
	for len(p) >= 8 {
		v := rng.Uint64()
		for j := range 8 {
			p[j] = byte(v >> (8 * j))
		}
		p = p[8:]
	}
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
}

// sameBytes fails the test at the first difference between want and got.
func sameBytes(t testing.TB, what string, want, got []byte) {
	t.Helper()
	if bytes.Equal(want, got) {
		return
	}
	if len(want) != len(got) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			end := min(i+16, len(want))
			t.Fatalf("%s: first difference at offset %d: got % x, want % x", what, i, got[i:end], want[i:end])
		}
	}
}

// readFile reads a whole file or fails the test.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// patternByte is byte p of nbdkit's pattern plugin (and nbdscope's pattern
// backend): every aligned 8 bytes hold their offset as a big-endian u64.
func patternByte(p int64) byte {
	base := uint64(p) &^ 7
	return byte(base >> (8 * (7 - uint64(p)&7)))
}

// patternBytes returns the pattern for [off, off+n).
func patternBytes(off int64, n int) []byte {
	base := off &^ 7
	buf := make([]byte, (off-base)+int64(n)+8)
	for i := 0; i+8 <= len(buf); i += 8 {
		binary.BigEndian.PutUint64(buf[i:], uint64(base)+uint64(i))
	}
	return buf[off-base : off-base+int64(n)]
}

// checkPattern verifies that b holds the pattern starting at offset off.
func checkPattern(t testing.TB, what string, b []byte, off int64) {
	t.Helper()
	want := patternBytes(off, len(b))
	if bytes.Equal(b, want) {
		return
	}
	for i := range b {
		if b[i] != want[i] {
			lo := max(0, i-8)
			t.Fatalf("%s: pattern mismatch at offset %d: got 0x%02x, want 0x%02x (bytes from %d: % x)",
				what, off+int64(i), b[i], want[i], off+int64(lo), b[lo:min(len(b), lo+24)])
		}
	}
}

// TestPatternHelper checks patternBytes against the byte-wise definition
// and the nbdkit-pattern-plugin(1) example (0x28 at offset 0x28+7).
func TestPatternHelper(t *testing.T) {
	for _, off := range []int64{0, 1, 7, 8, 13, 4095, 1<<32 - 3} {
		b := patternBytes(off, 37)
		for i := range b {
			if b[i] != patternByte(off+int64(i)) {
				t.Fatalf("patternBytes(%d)[%d] = %#x, want %#x", off, i, b[i], patternByte(off+int64(i)))
			}
		}
	}
	if b := patternBytes(0x28, 8); !bytes.Equal(b, []byte{0, 0, 0, 0, 0, 0, 0, 0x28}) {
		t.Fatalf("pattern at 0x28 = % x", b)
	}
}
