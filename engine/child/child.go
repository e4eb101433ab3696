// Package child is what runs inside a child process (`nbdscope __child
// ROLE SPEC`): this entry point and command loop, the server role
// (server.go), the load role (load.go, load_lost.go), the exec load role
// (exec.go) and the consume modes as the load runs them (consume.go).
//
// The controller (engine) reaches it only through the protocol
// (engine/wire) and the process plumbing both ends share
// (engine/childproc): engine never imports this package and it never
// imports engine. Each role applies the settings the table (model) routes
// to it with the functions its setters list by name (loadSetters,
// serverSetters); a test fails when an entry routed to a child has none.
// The binary's main calls RunChild, and so do the engine's tests, whose
// test binary stands in for nbdscope as its children.
package child

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
	"strconv"
	"syscall"

	"nbdscope/engine/childproc"

	"nbdscope/engine/wire"
	"nbdscope/model"
)

// role is what a child does between commands.
type role interface {
	// handle answers one command (not "stop").
	handle(cmd wire.Cmd) wire.Msg
	close()
}

// orphanable is a role that, when its controller went away without
// stopping it, also cleans up what the controller would have (the server:
// the controller's socket directory). While the controller lives, that is
// the controller's: a server that removed it on a plain stop would take it
// from under a new server that a restart is about to bind there.
type orphanable interface {
	orphan()
}

// RunChild is the entry point of `nbdscope __child ROLE SPEC`, started by
// the controller. It serves commands from stdin until stdin closes (the
// controller died or stopped us) or a "stop" command arrives.
func RunChild(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: nbdscope %s server|load SPEC (internal)", wire.ChildCommand)
	}
	// SIGPIPE is ignored, not caught: a write to a peer that went away
	// (the target on a data socket, the controller on stdout) then fails
	// with EPIPE where it happens and is handled there as the error it is.
	// Caught, every SIGPIPE would look like a request to stop and end the
	// child with status 0 and no word of why; left to Go's default, one on
	// fd 1 would kill the child before it removes its socket.
	signal.Ignore(syscall.SIGPIPE)
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	defer startCPUProfile(args[0])()
	out := childproc.NewWriter(os.Stdout)
	var r role
	var ready wire.Msg
	var err error
	switch args[0] {
	case model.RoleServer:
		var spec wire.ServerSpec
		if err := json.Unmarshal([]byte(args[1]), &spec); err != nil {
			return fmt.Errorf("server spec: %w", err)
		}
		if spec.AttachPID > 0 {
			r, ready, err = attachRealServerRole(spec)
		} else if spec.Command() != "" {
			r, ready, err = startRealServerRole(ctx, spec)
		} else {
			r, ready, err = startServerRole(ctx, spec)
		}
	case model.RoleLoad:
		var spec wire.LoadSpec
		if err := json.Unmarshal([]byte(args[1]), &spec); err != nil {
			return fmt.Errorf("load spec: %w", err)
		}
		if spec.Exec() != "" {
			r, ready, err = startExecRole(ctx, spec)
		} else {
			r, ready, err = startLoadRole(ctx, spec)
		}
	default:
		return fmt.Errorf("unknown role %q", args[0])
	}
	if err != nil {
		out.Send(wire.Msg{Type: "error", Err: err.Error()})
		return err
	}
	defer r.close()
	ready.Type = "ready"
	if err := out.Send(ready); err != nil {
		return err
	}
	orphaned, err := serve(ctx, r, out)
	if o, ok := r.(orphanable); ok && orphaned {
		o.orphan() // before the deferred close, which does the cleaning
	}
	return err
}

// failer is a role that can fail as a whole while it runs (the load's
// target went away); the error ends the child with a non-zero status.
type failer interface {
	failed() <-chan error
}

// serve answers commands until the controller stops the child or goes
// away, a signal arrives, or the role fails. orphaned says the child ends
// without the controller's word: it went away, or a signal came (the
// parent-death signal, see childproc's setChildAttrs, is sent as soon as the thread
// that started us exits, while the rest of the controller may still be
// dying, so the signal itself is the news). The controller never signals a
// child it means to keep serving: it stops one with "stop", then SIGKILL.
func serve(ctx context.Context, r role, out *childproc.Writer) (orphaned bool, err error) {
	var fatal <-chan error
	if f, ok := r.(failer); ok {
		fatal = f.failed()
	}

	// Changes run in order on a goroutine of their own, so polls are
	// answered while one takes its time (a pause drains the requests in
	// flight; a stuck load must still report that it is stuck).
	sets := make(chan wire.Cmd, 64)
	gone := make(chan error, 1)
	defer close(sets)
	go func() {
		for c := range sets {
			if err := answer(r, c, out); err != nil {
				select {
				case gone <- err:
				default:
				}
			}
		}
	}()
	cmds := make(chan wire.Cmd)
	readErr := make(chan error, 1)
	go func() {
		dec := json.NewDecoder(bufio.NewReader(commandInput()))
		for {
			var c wire.Cmd
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
			return true, nil
		case err := <-fatal:
			// Told to the controller first (the crash report's reason),
			// then returned: main prints it to stderr and exits 1.
			out.Send(wire.Msg{Type: "fatal", Err: err.Error()})
			return false, err
		case err := <-gone:
			return true, err // the controller is gone: stop with it
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return true, nil // controller gone: stop with it
			}
			return true, fmt.Errorf("reading commands: %w", err)
		case c := <-cmds:
			switch c.Op {
			case childproc.OpStop:
				return false, nil
			case "poll":
				if err := answer(r, c, out); err != nil {
					return true, err // the controller is gone: stop with it
				}
			default:
				sets <- c
			}
		}
	}
}

// answer handles one command and sends its reply; an error means the
// controller is gone.
func answer(r role, c wire.Cmd, out *childproc.Writer) error {
	m := r.handle(c)
	m.Seq = c.Seq
	if m.Type == "" {
		m.Type = "reply"
	}
	return out.Send(m)
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

// childSetter finds the function that applies a set command inside a
// child, in its role's setters (loadSetters, serverSetters), and checks the
// argument; role names the role in the error.
func childSetter[R any](c wire.Cmd, role string, setters map[string]func(R, wire.Cmd) wire.Msg) (func(R, wire.Cmd) wire.Msg, *wire.Msg) {
	st, ok := model.Lookup(c.Setting)
	set, has := setters[c.Setting]
	if !ok || !has {
		return nil, &wire.Msg{Type: "error", Err: role + ": cannot set " + strconv.Quote(c.Setting)}
	}
	if err := st.CheckArg(model.ChildArg{Int: c.Int, Str: c.Str}); err != nil {
		return nil, &wire.Msg{Type: "error", Err: err.Error()}
	}
	return set, nil
}

// commandInput is where the controller's commands arrive: stdin, read
// through Go's netpoller where it can be. A blocking read(2) of the pipe
// holds the reading thread in a system call between commands, and each
// time a command ends one, sysmon finds the P of the next read in a
// system call, takes it and goes back to waking every 20 µs: with the
// controller's polls every 100 ms that was about 600 sysmon wake-ups a
// second in a load child, each one taking the load's core from its reader
// (per-thread /proc counts: 544 switches a second of sysmon's thread, 606
// involuntary of the reader's). Made non-blocking, the pipe is read by a
// goroutine that parks in the netpoller between commands, as the data
// sockets' goroutines do, and its reads are raw (cmdinput_linux.go). The
// file is kept for the process's life: a second *os.File of descriptor 0
// left to the collector would close it.
func commandInput() io.Reader {
	if err := syscall.SetNonblock(0, true); err != nil {
		return os.Stdin
	}
	commandFile = os.NewFile(0, "stdin")
	return commandReader(commandFile)
}

var commandFile *os.File
