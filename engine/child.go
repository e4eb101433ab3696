package engine

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// child is one spawned process in an internal role.
type child struct {
	role string
	side string
	cmd  *exec.Cmd

	wmu   sync.Mutex
	stdin io.WriteCloser

	mu      sync.Mutex
	seq     uint64
	waiting map[uint64]chan childMsg
	ready   chan childMsg
	stderr  []string // last lines
	fatal   string   // why the child failed, as it said itself ("fatal" message)

	exited  chan struct{}
	exitErr error
}

const stderrKeep = 20

// spawn starts exe in an internal role and waits for its ready message.
func spawn(exe, role, side string, spec any, timeout time.Duration) (*child, childMsg, error) {
	sj, err := json.Marshal(spec)
	if err != nil {
		return nil, childMsg{}, err
	}
	c := &child{role: role, side: side, waiting: map[uint64]chan childMsg{}, ready: make(chan childMsg, 1), exited: make(chan struct{})}
	c.cmd = exec.Command(exe, ChildCommand, role, string(sj))
	setChildAttrs(c.cmd)
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, childMsg{}, err
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, childMsg{}, err
	}
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, childMsg{}, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, childMsg{}, fmt.Errorf("starting %s %s: %w", side, role, err)
	}
	var pipes sync.WaitGroup
	pipes.Add(2)
	go func() { defer pipes.Done(); c.readStdout(stdout) }()
	go func() { defer pipes.Done(); c.readStderr(stderr) }()
	go func() {
		pipes.Wait() // Wait closes the pipes; read them to the end first
		c.exitErr = c.cmd.Wait()
		c.mu.Lock()
		for _, ch := range c.waiting {
			close(ch)
		}
		c.waiting = map[uint64]chan childMsg{}
		c.mu.Unlock()
		close(c.exited)
	}()
	select {
	case m := <-c.ready:
		if m.Type == "error" {
			c.kill() // and reap it: a failed start leaves no process behind
			<-c.exited
			return nil, childMsg{}, fmt.Errorf("%s %s: %s", side, role, m.Err)
		}
		return c, m, nil
	case <-c.exited:
		return nil, childMsg{}, fmt.Errorf("%s %s exited during start (%v): %s", side, role, c.exitErr, c.lastStderr())
	case <-time.After(timeout):
		c.kill()
		<-c.exited
		return nil, childMsg{}, fmt.Errorf("%s %s did not start within %v", side, role, timeout)
	}
}

func (c *child) readStdout(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var m childMsg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			c.noteStderr("bad message from child: " + sc.Text())
			continue
		}
		if m.Type == "fatal" {
			c.mu.Lock()
			c.fatal = m.Err
			c.mu.Unlock()
			continue
		}
		if m.Seq == 0 && (m.Type == "ready" || m.Type == "error") {
			select {
			case c.ready <- m:
			default:
			}
			continue
		}
		c.mu.Lock()
		ch := c.waiting[m.Seq]
		delete(c.waiting, m.Seq)
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
	io.Copy(io.Discard, r)
}

func (c *child) readStderr(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		c.noteStderr(sc.Text())
	}
	io.Copy(io.Discard, r)
}

func (c *child) noteStderr(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stderr = append(c.stderr, line)
	if len(c.stderr) > stderrKeep {
		c.stderr = c.stderr[len(c.stderr)-stderrKeep:]
	}
}

func (c *child) stderrLines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.stderr...)
}

func (c *child) lastStderr() string {
	l := c.stderrLines()
	if len(l) == 0 {
		return "(no output)"
	}
	return strings.Join(l[max(0, len(l)-3):], " | ")
}

var errChildGone = errors.New("child process exited")

// call sends a command and waits for its reply.
func (c *child) call(cmd childCmd, timeout time.Duration) (childMsg, error) {
	ch := make(chan childMsg, 1)
	c.mu.Lock()
	select {
	case <-c.exited:
		c.mu.Unlock()
		return childMsg{}, errChildGone
	default:
	}
	c.seq++
	cmd.Seq = c.seq
	c.waiting[cmd.Seq] = ch
	c.mu.Unlock()
	b, _ := json.Marshal(cmd)
	c.wmu.Lock()
	_, err := c.stdin.Write(append(b, '\n'))
	c.wmu.Unlock()
	if err != nil {
		return childMsg{}, errChildGone
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m, ok := <-ch:
		if !ok {
			return childMsg{}, errChildGone
		}
		if m.Type == "error" {
			return m, errors.New(m.Err)
		}
		return m, nil
	case <-t.C:
		c.mu.Lock()
		delete(c.waiting, cmd.Seq)
		c.mu.Unlock()
		return childMsg{}, fmt.Errorf("%s %s did not answer %q within %v", c.side, c.role, cmd.Op, timeout)
	}
}

// stop asks the child to end, then kills it if it does not within grace.
func (c *child) stop(grace time.Duration) {
	c.wmu.Lock()
	c.stdin.Write([]byte(`{"op":"stop"}` + "\n"))
	c.stdin.Close()
	c.wmu.Unlock()
	select {
	case <-c.exited:
	case <-time.After(grace):
		c.kill()
		<-c.exited
	}
}

func (c *child) kill() {
	if c.cmd.Process != nil {
		c.cmd.Process.Kill()
	}
}

// reason is why the child ended, in its own words where it gave them: its
// fatal message, else its last line on stderr, else "(no output)".
func (c *child) reason() string {
	c.mu.Lock()
	f := c.fatal
	c.mu.Unlock()
	if f != "" {
		return f
	}
	if l := c.stderrLines(); len(l) > 0 {
		return l[len(l)-1]
	}
	return "(no output)"
}

// status describes how the child ended.
func (c *child) status() string {
	if c.exitErr == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(c.exitErr, &ee) {
		return ee.String()
	}
	return c.exitErr.Error()
}
