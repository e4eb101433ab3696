package childproc

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain runs this test binary as the child when started by Start:
// `childproc.test __child ROLE SPEC`. The roles are tiny stand-ins that
// use the protocol the way engine's children do.
func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == Command {
		os.Exit(testChild(os.Args[2], os.Args[3]))
	}
	os.Exit(m.Run())
}

type testCmd struct {
	Op  string `json:"op"`
	Seq uint64 `json:"seq"`
	N   int    `json:"n,omitempty"`
}

type testMsg struct {
	Type string `json:"type"`
	Seq  uint64 `json:"seq,omitempty"`
	Err  string `json:"err,omitempty"`
	N    int    `json:"n,omitempty"`
}

// testChild: "echo" answers n*2 ("fail" ops with an error, "hang" never)
// until stop; "refuse" fails its start; "die" writes to stderr, says why
// it fails and exits 3; "mute" never says ready; "deaf" ignores stop.
func testChild(role, spec string) int {
	out := NewWriter(os.Stdout)
	switch role {
	case "refuse":
		out.Send(testMsg{Type: TypeError, Err: "no such backend " + spec})
		return 1
	case "mute":
		time.Sleep(time.Minute)
		return 0
	case "die":
		out.Send(testMsg{Type: TypeReady})
		os.Stderr.WriteString("first line\nlast line\n")
		out.Send(testMsg{Type: TypeFatal, Err: "target gone"})
		return 3
	}
	out.Send(testMsg{Type: TypeReady, N: len(spec)})
	dec := json.NewDecoder(bufio.NewReader(os.Stdin))
	for {
		var c testCmd
		if err := dec.Decode(&c); err != nil {
			if role == "deaf" {
				time.Sleep(time.Minute)
			}
			return 0
		}
		switch {
		case c.Op == OpStop && role == "deaf":
		case c.Op == OpStop:
			return 0
		case c.Op == "fail":
			out.Send(testMsg{Type: TypeError, Seq: c.Seq, Err: "refused"})
		case c.Op == "hang":
		default:
			out.Send(testMsg{Type: TypeReply, Seq: c.Seq, N: 2 * c.N})
		}
	}
}

func start(t *testing.T, role string) (*Proc, testMsg) {
	t.Helper()
	p, raw, err := Start(os.Args[0], role, "test "+role, "spec", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(); <-p.Exited() })
	var m testMsg
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return p, m
}

func call(p *Proc, op string, n int, timeout time.Duration) (testMsg, error) {
	raw, err := p.Call(op, func(seq uint64) any { return testCmd{Op: op, Seq: seq, N: n} }, timeout)
	var m testMsg
	if raw != nil {
		json.Unmarshal(raw, &m)
	}
	return m, err
}

// TestCallsMatchReplies: replies reach the call that asked, concurrent
// calls included; an error reply is the call's error; an unanswered call
// times out naming its op; a stopped child exits 0 and a call after that
// is ErrGone.
func TestCallsMatchReplies(t *testing.T) {
	p, ready := start(t, "echo")
	if ready.N != len(`"spec"`) {
		t.Fatalf("ready body %+v: the spec did not arrive as JSON", ready)
	}
	errs := make(chan error, 20)
	for i := 1; i <= 20; i++ {
		go func() {
			m, err := call(p, "double", i, 10*time.Second)
			if err == nil && m.N != 2*i {
				err = errors.New("wrong reply")
			}
			errs <- err
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := call(p, "fail", 0, 10*time.Second); err == nil || err.Error() != "refused" {
		t.Fatalf("error reply: got %v, want refused", err)
	}
	if _, err := call(p, "hang", 0, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), `test echo did not answer "hang"`) {
		t.Fatalf("unanswered call: got %v", err)
	}
	p.Stop(10 * time.Second)
	if st := p.Status(); st != "exit status 0" {
		t.Fatalf("stopped child: %s", st)
	}
	if _, err := call(p, "double", 1, time.Second); !errors.Is(err, ErrGone) {
		t.Fatalf("call after stop: %v, want ErrGone", err)
	}
}

// TestStartFailures: a refused start, a child that never says ready, and
// a binary that cannot start say why and leave no process behind.
func TestStartFailures(t *testing.T) {
	if _, _, err := Start(os.Args[0], "refuse", "test refuse", "x", 10*time.Second); err == nil || !strings.Contains(err.Error(), `test refuse: no such backend "x"`) {
		t.Fatalf("refused start: %v", err)
	}
	if _, _, err := Start(os.Args[0], "mute", "test mute", "x", 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "did not start within") {
		t.Fatalf("mute child: %v", err)
	}
	if _, _, err := Start("/nonexistent/nbdscope", "echo", "test echo", "x", time.Second); err == nil || !strings.Contains(err.Error(), "starting test echo") {
		t.Fatalf("missing binary: %v", err)
	}
}

// TestDeathReason: a child that dies is reported by its own fatal word,
// with its exit status and its stderr tail.
func TestDeathReason(t *testing.T) {
	p, _ := start(t, "die")
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("child did not exit")
	}
	if p.Status() != "exit status 3" || p.Reason() != "target gone" {
		t.Fatalf("status %q reason %q", p.Status(), p.Reason())
	}
	if l := p.StderrLines(); len(l) != 2 || l[1] != "last line" || p.LastStderr() != "first line | last line" {
		t.Fatalf("stderr %q / %q", l, p.LastStderr())
	}
}

// TestStopKillsDeaf: a child that ignores stop is killed after the grace.
func TestStopKillsDeaf(t *testing.T) {
	p, _ := start(t, "deaf")
	p.Stop(100 * time.Millisecond)
	if st := p.Status(); !strings.Contains(st, "killed") {
		t.Fatalf("deaf child ended %q, want killed", st)
	}
}
