package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"nbdscope/model"
)

// Reliability and security of a running Pair (issue 6).

// procFDs counts the open file descriptors of a process (Linux).
func procFDs(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

// drainUpdates empties the updates channel without blocking, so a long
// series of changes cannot fill it.
func drainUpdates(p *Pair) {
	for {
		select {
		case _, ok := <-p.Updates():
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// TestConnectionChangesUnderLoad: up to 100 connection-count changes (1…4)
// on a side, at least 20, within 40 s, while its load runs; afterwards the load still runs, nothing failed,
// and the open file descriptors of its load and server processes are back
// at their starting level.
func TestConnectionChangesUnderLoad(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts file descriptors in /proc")
	}
	cfg := testConfig()
	for i := range cfg.Sides {
		cfg.Sides[i].RequestSize = 64 << 10
	}
	p := startPair(t, cfg)
	waitFor(t, p, 10*time.Second, "A sample", activeSample("A"))
	srv, ld := p.sides[0].children()
	loadPid, srvPid := ld.pid(), srv.pid()
	baseLoad, baseSrv := procFDs(loadPid), procFDs(srvPid)
	if baseLoad < 0 || baseSrv < 0 {
		t.Fatalf("cannot read /proc/PID/fd (%d, %d)", baseLoad, baseSrv)
	}

	// Up to 100 changes, as many as the budget allows: how many a busy
	// machine gets through under the race detector is its speed, not
	// this test's concern. A leak of one fd per change shows in a few;
	// minChanges still covers the sequence's cycle several times.
	const changes = 100
	const minChanges = 20
	const budget = 40 * time.Second
	seq := []int{2, 3, 4, 3, 2, 1}
	start := time.Now()
	n, peakLoad, peakSrv := 0, 0, 0
	for ; n < changes && time.Since(start) < budget; n++ {
		v := seq[n%len(seq)]
		if err := applyText(p, 0, model.SetConnections, strconv.Itoa(v)); err != nil {
			t.Fatalf("change %d to %d connections: %v", n, v, err)
		}
		peakLoad, peakSrv = max(peakLoad, procFDs(loadPid)), max(peakSrv, procFDs(srvPid))
		drainUpdates(p)
	}
	if peakLoad < baseLoad+3 || peakSrv < baseSrv+1 {
		t.Errorf("fds never rose with the connections (load %d, peak %d; server %d, peak %d): the count is not measuring them",
			baseLoad, peakLoad, baseSrv, peakSrv)
	}
	if n < minChanges {
		t.Errorf("only %d changes within %v, want at least %d", n, budget, minChanges)
	}
	if p.Config().Sides[0].Connections != 1 {
		if err := applyText(p, 0, model.SetConnections, "1"); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d connection changes in %v; fds of load %d (peak %d), of server %d (peak %d)",
		n, time.Since(start).Round(time.Millisecond), baseLoad, peakLoad, baseSrv, peakSrv)
	waitFor(t, p, 10*time.Second, "A running on 1 connection", func(u model.Update) bool {
		return u.Sample != nil && u.Sample.Side == "A" && u.Sample.Connections == 1 && u.Sample.Bytes > 0
	})
	var gotLoad, gotSrv int
	deadline := time.Now().Add(15 * time.Second) // patient: a leaked fd never closes
	for {
		gotLoad, gotSrv = procFDs(loadPid), procFDs(srvPid)
		if (gotLoad == baseLoad && gotSrv == baseSrv) || time.Now().After(deadline) {
			break
		}
		drainUpdates(p)
		time.Sleep(20 * time.Millisecond)
	}
	if gotLoad != baseLoad || gotSrv != baseSrv {
		t.Errorf("open fds: load %d → %d, server %d → %d", baseLoad, gotLoad, baseSrv, gotSrv)
	}
	for _, sd := range p.Report().Sides {
		if sd.Name == "A" && sd.Summary.ErrorCount() != 0 {
			t.Errorf("side A had %d request errors during the changes", sd.Summary.ErrorCount())
		}
	}
}

// TestPairPrivateSocketDir: the unix sockets of a running pair live in a
// directory only the user can enter (0700) and are themselves 0600.
func TestPairPrivateSocketDir(t *testing.T) {
	p := startPair(t, testConfig())
	fi, err := os.Stat(p.dir)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory %s: mode %v, want drwx------", p.dir, fi.Mode())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		t.Errorf("socket directory owned by uid %d, not %d", st.Uid, os.Getuid())
	}
	socks := 0
	for _, name := range []string{"A.sock", "B.sock"} {
		si, err := os.Lstat(filepath.Join(p.dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		socks++
		if si.Mode()&os.ModeSocket == 0 || si.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want a socket with rw-------", name, si.Mode())
		}
	}
	if socks != 2 {
		ents, _ := os.ReadDir(p.dir)
		t.Fatalf("sockets in %s: %v", p.dir, ents)
	}
}
