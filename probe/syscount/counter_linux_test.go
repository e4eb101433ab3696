package syscount

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"nbdscope/internal/testbin"
)

// needCounting skips a test when this machine does not allow counting,
// with the reason, or fails it under NBDSCOPE_INTEROP=1 (CI, where
// .ci/run mounts tracefs and runs as root).
func needCounting(t testing.TB) {
	t.Helper()
	if err := Probe(); err != nil {
		testbin.Require(t, fmt.Errorf("system calls cannot be counted here: %w", err))
	}
}

// helperProc is a running ioHelper.
type helperProc struct {
	*testbin.Helper
	pid int
	fds []int // pair i is fds[2i] (the sending end), fds[2i+1]
}

// startHelper starts ioHelper with workers pairs of rounds each and waits
// for its first line. It is killed at the end of the test.
func startHelper(t *testing.T, workers, rounds int) *helperProc {
	t.Helper()
	cmd := testbin.HelperCommand(os.Args[0], helperEnv, "io",
		"HELPER_WORKERS="+strconv.Itoa(workers), "HELPER_ROUNDS="+strconv.Itoa(rounds))
	h := &helperProc{Helper: testbin.StartHelper(t, cmd)}
	h.pid = h.Cmd.Process.Pid
	f := strings.Fields(h.Line(t))
	if len(f) != 2 || f[0] != strconv.Itoa(h.pid) {
		t.Fatalf("helper said %q", f)
	}
	for _, s := range strings.Split(f[1], ",") {
		fd, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("helper's fds %q: %v", f[1], err)
		}
		h.fds = append(h.fds, fd)
	}
	return h
}

// run says "go" and returns the helper's own count of each pair's calls.
func (h *helperProc) run(t *testing.T) []selfCount {
	t.Helper()
	if _, err := io.WriteString(h.Stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	js, ok := strings.CutPrefix(h.Line(t), "done ")
	if !ok {
		t.Fatalf("helper said %q, not done", js)
	}
	var byPair []selfCount
	if err := json.Unmarshal([]byte(js), &byPair); err != nil {
		t.Fatal(err)
	}
	return byPair
}

// exit closes the helper's stdin and waits for it to exit.
func (h *helperProc) exit(t *testing.T) {
	t.Helper()
	h.Stdin.Close()
	if err := h.Cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
}

// testMechanism is the mechanism mustOpen asks for when a test's Options
// leave it Auto; eachMechanism sets it for its subtests (none of this
// package's tests runs in parallel).
var testMechanism = Auto

// eachMechanism runs test counting per process (bpf) and per thread
// (perf): both must give the same counts. A mechanism this machine does
// not allow is skipped with the reason.
func eachMechanism(t *testing.T, test func(t *testing.T)) {
	for _, name := range []string{"bpf", "perf"} {
		t.Run(name, func(t *testing.T) {
			testMechanism = useMechanism(t, name)
			defer func() { testMechanism = Auto }()
			test(t)
		})
	}
}

// useMechanism is the mechanism a test or benchmark names (bpf or perf);
// bpf is skipped where it cannot be loaded.
func useMechanism(t testing.TB, name string) Mechanism {
	t.Helper()
	m, err := ParseMechanism(name)
	if err != nil {
		t.Fatal(err)
	}
	if m == PerProcess {
		needBPF(t)
	}
	return m
}

// needBPF skips a test where BPF counting cannot be loaded.
func needBPF(t testing.TB) {
	t.Helper()
	c, err := Open(os.Getpid(), Options{AllFDs: true, Mechanism: PerProcess})
	if err != nil {
		t.Skipf("counting per process (bpf) is not possible here: %v", err)
	}
	c.Close()
}

func mustOpen(t *testing.T, pid int, opt Options) *Counter {
	t.Helper()
	if opt.Mechanism == Auto {
		opt.Mechanism = testMechanism
	}
	c, err := Open(pid, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func mustRead(t *testing.T, c *Counter) Counts {
	t.Helper()
	n, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkAgainstSelf compares counts on some pairs' fds with the helper's
// own count of those pairs: the calls exactly, the EAGAIN as a range that
// holds the true figure. When every pair is counted (allPairs), the range
// is exact for every call the helper makes on its data fds only (all but
// read and write); pairs left out are calls elsewhere.
func checkAgainstSelf(t *testing.T, got Counts, want selfCount, allPairs bool) {
	t.Helper()
	for s := range NumSyscalls {
		c := got.Of[s]
		if c.Calls != want.Calls[s] {
			t.Errorf("%s: counted %d calls on the data fds, the process made %d", s, c.Calls, want.Calls[s])
		}
		e := c.EAGAIN()
		if e.Min > want.EAGAIN[s] || e.Max < want.EAGAIN[s] {
			t.Errorf("%s: EAGAIN %v does not hold the process's own %d", s, e, want.EAGAIN[s])
		}
		if allPairs && s != Read && s != Write && !e.Exact() {
			t.Errorf("%s: EAGAIN %v is not exact, though the call is made on the data fds only", s, e)
		}
	}
}

// TestCountsMatchTheProcessOwnCount counts a multi-threaded process whose
// threads come and go, on its data fds and on all fds, and compares with
// what it counted itself. Inherited counters on new threads, exited
// threads' counts, the fd filters and the EAGAIN range are all in it: a
// counter opened again for a thread that had inherited one counts its
// calls twice, and one without inherit misses the new threads.
func TestCountsMatchTheProcessOwnCount(t *testing.T) {
	eachMechanism(t, func(t *testing.T) {
		needCounting(t)
		h := startHelper(t, 4, 300)
		data := mustOpen(t, h.pid, Options{FDs: h.fds})
		all := mustOpen(t, h.pid, Options{AllFDs: true})
		byPair := h.run(t)
		var want selfCount
		for _, c := range byPair {
			want.add(c)
		}
		got, gotAll := mustRead(t, data), mustRead(t, all)
		checkAgainstSelf(t, got, want, true)
		for s := range NumSyscalls {
			if gotAll.Of[s].Calls < got.Of[s].Calls || gotAll.Of[s].Calls != gotAll.Of[s].Any {
				t.Errorf("%s: on all fds %+v, on the data fds %+v", s, gotAll.Of[s], got.Of[s])
			}
		}
		// Every round read the empty pipe: the all-fd count has those.
		if r := gotAll.Of[Read].EAGAIN(); r.Min < want.EAGAIN[Read]+4*300 {
			t.Errorf("read EAGAIN on all fds %v, want at least %d", r, want.EAGAIN[Read]+4*300)
		}
		if data.Exited() {
			t.Error("Exited before the process exited")
		}
		h.exit(t)
		// The data fds saw no more calls; the helper's last read of stdin
		// (off the data fds) may have come after the reading above.
		after := mustRead(t, data)
		if d := after.Sub(got); d.Calls(Recv)+d.Calls(Send) != 0 || after.Calls(Recv) == 0 {
			t.Errorf("the data fds' counts after the process exited: %+v, before %+v", after, got)
		}
		if !data.Exited() {
			t.Error("Exited is false after the process exited")
		}
		t.Logf("receive %d calls, EAGAIN %v; send %d calls, EAGAIN %v (all fds: receive %d, send %d)",
			got.Calls(Recv), got.EAGAIN(Recv), got.Calls(Send), got.EAGAIN(Send), gotAll.Calls(Recv), gotAll.Calls(Send))
	})
}

// TestSetFDs moves the counted fds from pairs 0 and 1 to pairs 1 and 2
// before the I/O, then drops them all after it: the counts are those of
// pairs 1 and 2, kept after the drop.
func TestSetFDs(t *testing.T) {
	eachMechanism(t, func(t *testing.T) {
		needCounting(t)
		h := startHelper(t, 4, 50)
		c := mustOpen(t, h.pid, Options{FDs: h.fds[0:4]})
		if err := c.SetFDs(h.fds[2:6]); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(c.FDs()); got != fmt.Sprint(h.fds[2:6]) {
			t.Errorf("FDs() = %s, want %v", got, h.fds[2:6])
		}
		byPair := h.run(t)
		want := byPair[1]
		want.add(byPair[2])
		checkAgainstSelf(t, mustRead(t, c), want, false)
		if err := c.SetFDs(nil); err != nil {
			t.Fatal(err)
		}
		checkAgainstSelf(t, mustRead(t, c), want, false)
		if err := c.SetFDs([]int{-1}); err == nil {
			t.Error("SetFDs took fd -1")
		}
	})
}

// TestOpenGone: a process that has exited is ReasonGone, not a panic or
// a zero count.
func TestOpenGone(t *testing.T) {
	needCounting(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	_, err := Open(cmd.Process.Pid, Options{AllFDs: true})
	var u *Unavailable
	if !errors.As(err, &u) || u.Reason != ReasonGone {
		t.Fatalf("Open on an exited process: %v, want ReasonGone", err)
	}
	if _, err := Open(0, Options{}); err == nil {
		t.Error("Open took pid 0")
	}
}

// TestCallsSubset counts only recvmsg and sendmsg: those exactly, the
// others not at all.
func TestCallsSubset(t *testing.T) {
	eachMechanism(t, func(t *testing.T) {
		needCounting(t)
		h := startHelper(t, 2, 50)
		c := mustOpen(t, h.pid, Options{FDs: h.fds, Calls: []Syscall{Recvmsg, Sendmsg}})
		byPair := h.run(t)
		want := byPair[0]
		want.add(byPair[1])
		got := mustRead(t, c)
		for s := range NumSyscalls {
			w := uint64(0)
			if s == Recvmsg || s == Sendmsg {
				w = want.Calls[s]
			}
			if got.Of[s].Calls != w {
				t.Errorf("%s: %d calls, want %d", s, got.Of[s].Calls, w)
			}
		}
		if e := got.Of[Recvmsg].EAGAIN(); !e.Exact() || e.Min != want.EAGAIN[Recvmsg] {
			t.Errorf("recvmsg EAGAIN %v, want %d", e, want.EAGAIN[Recvmsg])
		}
		if len(c.Missing()) != 0 {
			t.Errorf("Missing() = %v", c.Missing())
		}
	})
}

// TestAnyFD counts the calls that the helper makes on its data fds only
// (all but read and write) on any fd, with no fd-filtered counter, and
// read on any fd too: the same counts, fewer counters per thread, and
// read's calls those on every fd.
func TestAnyFD(t *testing.T) {
	eachMechanism(t, func(t *testing.T) {
		needCounting(t)
		h := startHelper(t, 4, 100)
		anyFD := []Syscall{Readv, Recvfrom, Recvmsg, Recvmmsg, Writev, Sendto, Sendmsg, Sendmmsg}
		c := mustOpen(t, h.pid, Options{FDs: h.fds, AnyFD: anyFD})
		withRead := mustOpen(t, h.pid, Options{FDs: h.fds, AnyFD: []Syscall{Read}})
		byPair := h.run(t)
		var want selfCount
		for _, p := range byPair {
			want.add(p)
		}
		checkAgainstSelf(t, mustRead(t, c), want, true)
		if c.Mechanism() != PerThread {
			// No counters per thread to count.
		} else if n := len(c.onFDs[0].fds); n != int(NumSyscalls)-len(anyFD) {
			t.Errorf("%d fd-filtered counters per thread, want %d", n, int(NumSyscalls)-len(anyFD))
		}
		r := mustRead(t, withRead).Of[Read]
		if r.Calls != r.Any || r.Calls <= want.Calls[Read] {
			t.Errorf("read counted on any fd: %+v, want Calls = Any > the data fds' %d", r, want.Calls[Read])
		}
	})
}
