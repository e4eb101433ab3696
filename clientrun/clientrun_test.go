package clientrun

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestArgv(t *testing.T) {
	vars := Vars{"uri": "nbd+unix:///?socket=/t/it's.sock", "socket": "/t/it's.sock", "size": "4096"}
	got, err := Command{Line: `nbdcopy {uri} null: --x={size} '{"a":1}'`}.Argv(vars)
	want := []string{"nbdcopy", vars["uri"], "null:", "--x=4096", `{"a":1}`}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Argv = %q, %v; want %q", got, err, want)
	}
	got, err = Command{Line: `ls {socket} | wc -l`, Shell: true}.Argv(vars)
	want = []string{"/bin/sh", "-c", `ls '/t/it'\''s.sock' | wc -l`}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("shell Argv = %q, %v; want %q", got, err, want)
	}
}

// TestRunMeasuresTree: the CPU of a descendant the client waited for is
// in the client's figures (wait4's rusage), as time(1) reports it.
func TestRunMeasuresTree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The grandchild does a fixed amount of work; the shell only waits.
	spin := `sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'`
	res, err := Run(ctx, []string{"/bin/sh", "-c", spin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Seconds <= 0 || res.UserS+res.SysS <= 0 || res.Nvcsw+res.Nivcsw <= 0 {
		t.Fatalf("want wall time, the tree's CPU and context switches, got %+v", res)
	}
	// 200000 shell iterations cost well over 20 ms of CPU anywhere; the
	// waiting shell alone costs about 1 ms.
	if cpu := res.UserS + res.SysS; cpu < 0.02 {
		t.Errorf("CPU %.3fs: the grandchild's work is missing", cpu)
	}
}

func TestRunFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Run(ctx, []string{"/bin/sh", "-c", "for i in $(seq 1 30); do echo line$i >&2; done; exit 7"}, nil)
	var f *Failure
	if !errors.As(err, &f) || f.Status != "exit status 7" || !strings.HasSuffix(f.Stderr, "line30") || strings.Contains(f.Stderr, "line20\n") {
		t.Fatalf("want exit status 7 and the last 10 lines, got %v", err)
	}
	// A cancelled run is killed with its process group.
	ctx2, cancel2 := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel2()
	start := time.Now()
	if _, err := Run(ctx2, []string{"/bin/sh", "-c", "sleep 30 & wait"}, nil); err == nil {
		t.Fatal("a killed run reported success")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func TestClientsLine(t *testing.T) {
	cs := []Client{{Name: "qemu-img", Path: "/usr/bin/qemu-img"}, {Name: "nbdcopy", Path: "/usr/bin/nbdcopy", Note: "no --blkhash"}, {Name: "blksum"}}
	const want = "clients for 'sweep --exec' presets: qemu-img, nbdcopy (no --blkhash), blksum not found"
	if got := ClientsLine(cs); got != want {
		t.Errorf("ClientsLine = %q, want %q", got, want)
	}
	if got := Clients(); len(got) != 3 || got[0].Name != "qemu-img" || got[2].Name != "blksum" {
		t.Errorf("Clients() = %+v", got)
	}
}
