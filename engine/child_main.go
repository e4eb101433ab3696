package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// role is what a child does between commands.
type role interface {
	// handle answers one command (not "stop").
	handle(cmd childCmd) childMsg
	close()
}

// RunChild is the entry point of `nbdscope __child ROLE SPEC`, started by
// the controller. It serves commands from stdin until stdin closes (the
// controller died or stopped us) or a "stop" command arrives.
func RunChild(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: nbdscope %s server|load SPEC (internal)", ChildCommand)
	}
	// SIGPIPE too: a reply written after the controller died (a poll it
	// sent just before) would otherwise kill this process on the spot, by
	// Go's rule for fd 1, before it closes its listener, and leave the
	// socket file behind. Caught, it ends the child like the others.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	defer cancel()
	defer startCPUProfile(args[0])()
	out := &lineWriter{w: bufio.NewWriter(os.Stdout)}
	var r role
	var ready childMsg
	var err error
	switch args[0] {
	case RoleServer:
		var spec serverSpec
		if err := json.Unmarshal([]byte(args[1]), &spec); err != nil {
			return fmt.Errorf("server spec: %w", err)
		}
		r, ready, err = startServerRole(ctx, spec)
	case RoleLoad:
		var spec loadSpec
		if err := json.Unmarshal([]byte(args[1]), &spec); err != nil {
			return fmt.Errorf("load spec: %w", err)
		}
		r, ready, err = startLoadRole(ctx, spec)
	default:
		return fmt.Errorf("unknown role %q", args[0])
	}
	if err != nil {
		out.send(childMsg{Type: "error", Err: err.Error()})
		return err
	}
	defer r.close()
	ready.Type = "ready"
	out.send(ready)

	cmds := make(chan childCmd)
	readErr := make(chan error, 1)
	go func() {
		dec := json.NewDecoder(bufio.NewReader(os.Stdin))
		for {
			var c childCmd
			if err := dec.Decode(&c); err != nil {
				readErr <- err
				return
			}
			cmds <- c
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil // controller gone: stop with it
			}
			return fmt.Errorf("reading commands: %w", err)
		case c := <-cmds:
			if c.Op == "stop" {
				return nil
			}
			m := r.handle(c)
			m.Seq = c.Seq
			if m.Type == "" {
				m.Type = "reply"
			}
			out.send(m)
		}
	}
}

type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lineWriter) send(m childMsg) {
	b, _ := json.Marshal(m)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(b)
	l.w.WriteByte('\n')
	l.w.Flush()
}

// startCPUProfile writes a CPU profile of this child to
// $NBDSCOPE_CPUPROFILE/ROLE-PID.pprof when that variable names a directory
// (for bench/: profiling the server and load processes of a pair). The
// returned function stops it.
func startCPUProfile(role string) func() {
	dir := os.Getenv("NBDSCOPE_CPUPROFILE")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", role, os.Getpid())))
	if err != nil {
		fmt.Fprintf(os.Stderr, "cpu profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintf(os.Stderr, "cpu profile: %v\n", err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// selfCPU returns this process's user and system CPU seconds.
func selfCPU() (user, sys float64) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return tv(ru.Utime), tv(ru.Stime)
}

func tv(t unix.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
