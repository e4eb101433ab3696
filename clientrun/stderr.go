package clientrun

import (
	"io"
	"os"
	"os/exec"
	"time"
)

// stderrDrain bounds the wait for the rest of a client's stderr once its
// group and what escaped from it are killed: a process nbdscope does not
// know of that still holds the pipe does not hold the run's end.
const stderrDrain = time.Second

// stderrPipe is a client's stderr: a pipe of its own read into a
// tailBuffer. With an io.Writer as its Stderr, exec.Cmd.Wait waits for
// every process that holds the pipe to close it: a job that left the
// client's group (setsid sleep 1000 &) held Wait until it ended, which
// was never, or until WaitDelay, which failed the run. With the pipe's
// write end given as a file, Wait returns when the client exits; its
// stragglers are killed, and only then is the rest of the pipe read.
type stderrPipe struct {
	r, w *os.File
	done chan struct{}
}

// pipeStderr makes cmd's stderr a pipe read into tail once started.
func pipeStderr(cmd *exec.Cmd) (*stderrPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = w
	return &stderrPipe{r: r, w: w, done: make(chan struct{})}, nil
}

// started closes this process's write end and reads the pipe into tail
// (ok: the client started), or closes both ends (it did not).
func (p *stderrPipe) started(tail *tailBuffer, ok bool) {
	p.w.Close()
	if !ok {
		p.r.Close()
		close(p.done)
		return
	}
	go func() {
		io.Copy(tail, p.r)
		p.r.Close()
		close(p.done)
	}()
}

// finish waits for the rest of the pipe, up to stderrDrain.
func (p *stderrPipe) finish() {
	p.r.SetReadDeadline(time.Now().Add(stderrDrain))
	<-p.done
}
