package engine

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/model"
	"nbdscope/platform"
)

// threadCPUs returns the affinity of every thread of pid, as CPUList text.
func threadCPUs(t *testing.T, pid int) map[string]int {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		var set unix.CPUSet
		if unix.SchedGetaffinity(tid, &set) != nil {
			continue // the thread ended
		}
		var cpus []int
		for c := 0; c < 1024; c++ {
			if set.IsSet(c) {
				cpus = append(cpus, c)
			}
		}
		got[model.CPUList(cpus)]++
	}
	return got
}

// TestPlacementHoldsProcesses checks placement against the kernel: every
// thread of each child is held where the samples say, and a live change
// moves them.
func TestPlacementHoldsProcesses(t *testing.T) {
	allowed := platform.AllowedCPUs()
	if len(allowed) < 2 {
		t.Skipf("placement needs 2 CPUs; this process may use %v", allowed)
	}
	// Setting this thread's mask to what it already is changes nothing,
	// and tells whether this sandbox lets us set affinity at all.
	var mask unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mask); err != nil {
		t.Skipf("sched_getaffinity: %v", err)
	}
	if err := unix.SchedSetaffinity(0, &mask); err != nil {
		t.Skipf("this environment refuses sched_setaffinity: %v", err)
	}
	cfg := testConfig()
	cfg.Mode = model.ModeAlternate
	for i := range cfg.Sides {
		cfg.Sides[i].Placement = model.PlaceSplit
	}
	p := startPair(t, cfg)
	u := waitFor(t, p, 10*time.Second, "A sample", activeSample("A"))
	want := model.Placement{Setting: model.PlaceSplit, LoadCPUs: strconv.Itoa(allowed[0]), ServerCPUs: strconv.Itoa(allowed[1])}
	if u.Sample.Placement != want {
		t.Fatalf("sample placement %+v, want %+v", u.Sample.Placement, want)
	}
	check := func(what string, c *child, cpus string) {
		t.Helper()
		got := threadCPUs(t, c.pid())
		if len(got) != 1 || got[cpus] == 0 {
			t.Fatalf("%s threads by affinity %v, want all on %s", what, got, cpus)
		}
	}
	srv, ld := p.sides[0].children()
	check("A server", srv, want.ServerCPUs)
	check("A load", ld, want.LoadCPUs)

	if err := applyText(p, 0, model.SetPlacement, string(model.PlaceShared)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, 5*time.Second, "A sample with shared placement", func(u model.Update) bool {
		return u.Sample != nil && u.Sample.Side == "A" && u.Sample.Placement.Setting == model.PlaceShared &&
			u.Sample.Placement.ServerCPUs == want.LoadCPUs && u.Sample.Bytes > 0
	})
	check("A server (shared)", srv, want.LoadCPUs)

	if err := applyText(p, 0, model.SetPlacement, string(model.PlaceOS)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, 5*time.Second, "A sample with os placement", func(u model.Update) bool {
		return u.Sample != nil && u.Sample.Side == "A" && u.Sample.Placement.Setting == model.PlaceOS && u.Sample.Placement.LoadCPUs == "any"
	})
	check("A server (os)", srv, model.CPUList(allowed))
	check("A load (os)", ld, model.CPUList(allowed))

	// A restarted side is placed again.
	if err := applyText(p, 0, model.SetPlacement, string(model.PlaceSplit)); err != nil {
		t.Fatal(err)
	}
	if err := p.Restart(0); err != nil {
		t.Fatal(err)
	}
	srv, _ = p.sides[0].children()
	check("restarted A server", srv, want.ServerCPUs)
	rep := p.Report()
	var events int
	for _, e := range rep.Events {
		if e.Setting == model.SetPlacement {
			events++
		}
	}
	if events != 3 {
		t.Fatalf("%d placement events recorded, want 3: %+v", events, rep.Events)
	}
}
