// Package childproc runs helper processes: the same binary started again
// in an internal role, talked to over its stdin and stdout one JSON object
// per line (commands down, replies and reports up), its stderr kept for
// crash reports.
//
// It is the process plumbing only and knows nothing of NBD or of what the
// messages mean: it starts a child, matches each reply to its command by
// sequence number, times calls out, keeps the last lines of stderr, stops
// a child (a "stop" command, then SIGKILL after a grace period) and says
// how and why it ended. It reads only the envelope of a message (type,
// seq, err); the body is handed back as raw JSON for the caller (engine)
// to decode into its own types. Kept apart from engine so that the
// controller's view of a child is one small surface (Start, Call, Stop,
// Exited, Status, Reason) and the wire rules live in one place, with the
// child's end of the lines up (Writer) next to the parent's.
//
// The wire protocol's envelope:
//
//	down: {"op":"...","seq":N,...}   op "stop" (no seq) ends the child
//	up:   {"type":"ready",...}       seq 0: the child is up (body: its role's ready data)
//	      {"type":"error","err":...} seq 0: the start failed; seq N: command N failed
//	      {"type":"reply","seq":N,...}
//	      {"type":"fatal","err":...} the role failed as a whole; the child exits
package childproc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Command is the hidden subcommand a child is started with:
// `EXE __child ROLE SPEC`.
const Command = "__child"

// Message types up (the envelope's "type").
const (
	TypeReady = "ready"
	TypeReply = "reply"
	TypeError = "error"
	TypeFatal = "fatal"
)

// OpStop is the command that ends a child.
const OpStop = "stop"

// envelope is the part of every message up that the plumbing reads.
type envelope struct {
	Type string `json:"type"`
	Seq  uint64 `json:"seq,omitempty"`
	Err  string `json:"err,omitempty"`
}

// ErrGone is returned by Call once the child has exited or its stdin is
// closed.
var ErrGone = errors.New("child process exited")

const stderrKeep = 20

// Proc is one started child.
type Proc struct {
	name string // for messages: "A server"
	cmd  *exec.Cmd

	wmu   sync.Mutex
	stdin io.WriteCloser

	mu      sync.Mutex
	seq     uint64
	waiting map[uint64]chan json.RawMessage
	ready   chan json.RawMessage
	stderr  []string // last lines
	fatal   string   // why the child failed, as it said itself ("fatal" message)

	exited  chan struct{}
	exitErr error
}

// Start runs `exe __child role SPEC` (spec marshalled to JSON) and waits up
// to timeout for its ready message, which it returns raw. name labels the
// child in errors. A child that fails to start is reaped: nothing is left
// running.
func Start(exe, role, name string, spec any, timeout time.Duration) (*Proc, json.RawMessage, error) {
	sj, err := json.Marshal(spec)
	if err != nil {
		return nil, nil, err
	}
	p := &Proc{name: name, waiting: map[uint64]chan json.RawMessage{}, ready: make(chan json.RawMessage, 1), exited: make(chan struct{})}
	p.cmd = exec.Command(exe, Command, role, string(sj))
	setChildAttrs(p.cmd)
	if err := p.start(); err != nil {
		return nil, nil, fmt.Errorf("starting %s: %w", name, err)
	}
	select {
	case raw := <-p.ready:
		var e envelope
		json.Unmarshal(raw, &e)
		if e.Type == TypeError {
			p.Kill() // and reap it: a failed start leaves no process behind
			<-p.exited
			return nil, nil, fmt.Errorf("%s: %s", name, e.Err)
		}
		return p, raw, nil
	case <-p.exited:
		return nil, nil, fmt.Errorf("%s exited during start (%v): %s", name, p.exitErr, p.LastStderr())
	case <-time.After(timeout):
		p.Kill()
		<-p.exited
		return nil, nil, fmt.Errorf("%s did not start within %v", name, timeout)
	}
}

// Over speaks the protocol to a peer that is not a process of ours: its
// commands go to stdin, its messages come from stdout (for fakes in tests,
// through io.Pipe). Exited closes when stdout ends; Kill does nothing.
func Over(name string, stdin io.WriteCloser, stdout io.Reader) *Proc {
	p := &Proc{name: name, stdin: stdin, waiting: map[uint64]chan json.RawMessage{}, ready: make(chan json.RawMessage, 1), exited: make(chan struct{})}
	go func() {
		p.readStdout(stdout)
		p.ended(nil)
	}()
	return p
}

// ended records how the child ended, fails the calls still waiting and
// closes Exited.
func (p *Proc) ended(err error) {
	p.exitErr = err
	p.mu.Lock()
	for _, ch := range p.waiting {
		close(ch)
	}
	p.waiting = map[uint64]chan json.RawMessage{}
	p.mu.Unlock()
	close(p.exited)
}

// start opens the pipes, starts the process and the goroutines that read
// its output and reap it.
func (p *Proc) start() error {
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return err
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := p.cmd.Start(); err != nil {
		return err
	}
	var pipes sync.WaitGroup
	pipes.Add(2)
	go func() { defer pipes.Done(); p.readStdout(stdout) }()
	go func() { defer pipes.Done(); p.readStderr(stderr) }()
	go func() {
		pipes.Wait() // Wait closes the pipes; read them to the end first
		p.ended(p.cmd.Wait())
	}()
	return nil
}

func (p *Proc) readStdout(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		raw := json.RawMessage(append([]byte(nil), sc.Bytes()...))
		if seq, ok := replySeq(raw); ok {
			p.deliver(seq, raw)
			continue
		}
		var e envelope
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			p.noteStderr("bad message from child: " + sc.Text())
			continue
		}
		if e.Type == TypeFatal {
			p.mu.Lock()
			p.fatal = e.Err
			p.mu.Unlock()
			continue
		}
		if e.Seq == 0 && (e.Type == TypeReady || e.Type == TypeError) {
			select {
			case p.ready <- raw:
			default:
			}
			continue
		}
		p.deliver(e.Seq, raw)
	}
	io.Copy(io.Discard, r)
}

// deliver hands the message to the call waiting for seq, if any.
func (p *Proc) deliver(seq uint64, raw json.RawMessage) {
	p.mu.Lock()
	ch := p.waiting[seq]
	delete(p.waiting, seq)
	p.mu.Unlock()
	if ch != nil {
		ch <- raw
	}
}

// replyPrefix is how every reply line begins: Writer marshals the
// child's message struct, whose first fields are type and seq.
const replyPrefix = `{"type":"reply","seq":`

// replySeq reads a reply's sequence number from its first bytes, without
// decoding the line (false: not a reply written so; decode its
// envelope). A poll reply is 300-700 bytes, and decoding its envelope
// scanned all of them, twice a reply (here and in Call), before the
// caller decoded the body: 4 replies a round, 2 rounds a second at the
// default interval, in the controller whose CPU is the bar.
func replySeq(line []byte) (uint64, bool) {
	if len(line) <= len(replyPrefix) || string(line[:len(replyPrefix)]) != replyPrefix {
		return 0, false
	}
	var seq uint64
	for i, c := range line[len(replyPrefix):] {
		switch {
		case c >= '0' && c <= '9' && i < 19:
			seq = seq*10 + uint64(c-'0')
		case (c == ',' || c == '}') && i > 0:
			return seq, true
		default:
			return 0, false
		}
	}
	return 0, false
}

func (p *Proc) readStderr(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		p.noteStderr(sc.Text())
	}
	io.Copy(io.Discard, r)
}

func (p *Proc) noteStderr(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stderr = append(p.stderr, line)
	if len(p.stderr) > stderrKeep {
		p.stderr = p.stderr[len(p.stderr)-stderrKeep:]
	}
}

// StderrLines are the child's last lines on stderr (up to 20).
func (p *Proc) StderrLines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.stderr...)
}

// LastStderr is the child's last three lines on stderr in one line, or
// "(no output)".
func (p *Proc) LastStderr() string {
	l := p.StderrLines()
	if len(l) == 0 {
		return "(no output)"
	}
	return strings.Join(l[max(0, len(l)-3):], " | ")
}

// Call sends one command and waits up to timeout for its reply, which it
// returns raw. cmd builds the command for the sequence number it is given;
// the command must carry it as "seq", and the reply echoes it. op names
// the command in a timeout's error. A reply of type "error" is returned
// with its err as the error; ErrGone means the child is gone.
func (p *Proc) Call(op string, cmd func(seq uint64) any, timeout time.Duration) (json.RawMessage, error) {
	ch := make(chan json.RawMessage, 1)
	p.mu.Lock()
	select {
	case <-p.exited:
		p.mu.Unlock()
		return nil, ErrGone
	default:
	}
	p.seq++
	seq := p.seq
	p.waiting[seq] = ch
	p.mu.Unlock()
	b, err := json.Marshal(cmd(seq))
	if err != nil {
		p.forget(seq)
		return nil, err
	}
	p.wmu.Lock()
	_, err = p.stdin.Write(append(b, '\n'))
	p.wmu.Unlock()
	if err != nil {
		return nil, ErrGone
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case raw, ok := <-ch:
		if !ok {
			return nil, ErrGone
		}
		if _, reply := replySeq(raw); reply {
			return raw, nil
		}
		var e envelope
		json.Unmarshal(raw, &e)
		if e.Type == TypeError {
			return raw, errors.New(e.Err)
		}
		return raw, nil
	case <-t.C:
		p.forget(seq)
		return nil, fmt.Errorf("%s did not answer %q within %v", p.name, op, timeout)
	}
}

func (p *Proc) forget(seq uint64) {
	p.mu.Lock()
	delete(p.waiting, seq)
	p.mu.Unlock()
}

// Stop asks the child to end, then kills it if it does not within grace,
// and returns once it has been reaped.
func (p *Proc) Stop(grace time.Duration) {
	p.wmu.Lock()
	p.stdin.Write([]byte(`{"op":"` + OpStop + `"}` + "\n"))
	p.stdin.Close()
	p.wmu.Unlock()
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.Kill()
		<-p.exited
	}
}

// Kill sends SIGKILL to the child's process group (it leads one of its
// own: setChildAttrs), so nothing it started in it is left; Exited then
// closes once the child is reaped.
func (p *Proc) Kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		select {
		case <-p.exited:
			return // reaped: its group id may be another's by now
		default:
		}
		if syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) != nil {
			p.cmd.Process.Kill()
		}
	}
}

// Exited is closed once the child has exited and its output is read.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Process is the child's process (for its pid: pinning, tests); nil
// for a peer attached with Over.
func (p *Proc) Process() *os.Process {
	if p.cmd == nil {
		return nil
	}
	return p.cmd.Process
}

// Reason is why the child ended, in its own words where it gave them: its
// fatal message, else its last line on stderr, else "(no output)".
func (p *Proc) Reason() string {
	p.mu.Lock()
	f := p.fatal
	p.mu.Unlock()
	if f != "" {
		return f
	}
	if l := p.StderrLines(); len(l) > 0 {
		return l[len(l)-1]
	}
	return "(no output)"
}

// Status describes how the child ended ("exit status 1", "signal:
// killed"); valid once Exited is closed.
func (p *Proc) Status() string {
	if p.exitErr == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.exitErr, &ee) {
		return ee.String()
	}
	return p.exitErr.Error()
}
