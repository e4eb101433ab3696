// Package childtest holds what the tests of the child processes share,
// in the engine's tests and the child's own: a TestMain whose test binary
// doubles as nbdscope for its children, a server child started by hand,
// outside any pair, and an NBD export served in the test process for a
// load to read.
package childtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/internal/leakcheck"
	"nbdscope/model"
	"nbdscope/nbd"
)

// Main is a test package's TestMain for tests that start children of the
// test binary: started with the internal child command (wire.ChildCommand)
// the binary runs runChild (child.RunChild) instead of the tests. After
// tests that passed it checks that none left a goroutine behind:
// goleak.VerifyTestMain, but waiting (leakcheck) for the goroutines of the
// last tests to end.
func Main(m *testing.M, runChild func(args []string) error) {
	if len(os.Args) > 2 && os.Args[1] == wire.ChildCommand {
		if err := runChild(os.Args[2:]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if code == 0 {
		if err := leakcheck.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Config is the pair the tests run unless they need another: concurrent,
// sampled every 100 ms, each side a 1 GiB export read in 256 KiB requests,
// two in flight.
func Config() model.Config {
	cfg := model.DefaultConfig()
	cfg.Mode = model.ModeConcurrent
	cfg.Interval = model.Duration(100 * time.Millisecond)
	for i := range cfg.Sides {
		cfg.Sides[i].Size = 1 << 30
		cfg.Sides[i].RequestSize = 256 << 10
		cfg.Sides[i].InFlight = 2
	}
	return cfg
}

// ServerProc is a server child of the test binary started by hand,
// outside any Pair, talked to over its raw pipes.
type ServerProc struct {
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	Ready  string // its first line
}

// StartServer starts a server child of the test binary (whose TestMain
// runs child.RunChild for wire.ChildCommand) with spec and reads its first
// line; the test's cleanup kills it.
func StartServer(t *testing.T, spec wire.ServerSpec) *ServerProc {
	t.Helper()
	js, _ := json.Marshal(spec)
	p := &ServerProc{Cmd: exec.Command(os.Args[0], wire.ChildCommand, model.RoleServer, string(js))}
	var err error
	if p.Stdin, err = p.Cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if p.Stdout, err = p.Cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stdin.Close(); p.Cmd.Process.Kill(); p.Cmd.Wait() })
	if p.Ready, err = bufio.NewReader(p.Stdout).ReadString('\n'); err != nil {
		t.Fatalf("server child: no ready line: %v", err)
	}
	return p
}

// ServeExport serves exp on a unix socket for the test's life, with the
// given server send buffer (0: the default), and returns its URI.
func ServeExport(t *testing.T, exp nbd.Export, sndbuf int) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nbdc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	ln, err := nbd.ListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &nbd.Server{Exports: []nbd.Export{exp}}
	if sndbuf > 0 {
		srv.SetSocketBuffer(nbd.SendBuf, sndbuf)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return nbd.URI{Transport: "unix", Socket: sock}.String()
}
