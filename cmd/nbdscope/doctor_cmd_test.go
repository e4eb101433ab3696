package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"nbdscope/model"
	"nbdscope/platform"
)

func TestPlacementLine(t *testing.T) {
	cases := []struct {
		f      platform.Facts
		ok     bool
		substr string
	}{
		{platform.Facts{OS: "darwin", AllowedCPUs: []int{0, 1, 2, 3}}, true, "darwin cannot hold a process to a core"},
		{platform.Facts{OS: "linux", CanPin: true, AllowedCPUs: []int{3}}, false, "only cpu 3"},
		{platform.Facts{OS: "linux", CanPin: true, AllowedCPUs: []int{2, 5, 7}}, true, "load process on cpu 2, server on cpu 5 (usable cpus 2,5,7"},
	}
	for _, c := range cases {
		line, ok := placementLine(c.f)
		if ok != c.ok || !strings.Contains(line, c.substr) {
			t.Errorf("placementLine(%+v) = %q, %v; want %q, %v", c.f, line, ok, c.substr, c.ok)
		}
	}
}

// TestRunPlacementFlags runs the pair for real with a placement per side
// and checks the JSON says where each process ran; a bad value is refused.
func TestRunPlacementFlags(t *testing.T) {
	code, _, errOut := storeCmdRun(t, "", "run", "--placement", "everywhere")
	if code != 2 || !strings.Contains(errOut, `placement "everywhere": want one of split, shared, os`) {
		t.Fatalf("bad placement: exit %d, stderr %q", code, errOut)
	}
	t.Setenv(asBinaryEnv, "1") // the children are this test binary
	code, out, errOut := storeCmdRun(t, "", "run", "--duration", "1500ms", "--interval", "100ms", "--size", "1g",
		"--request-size", "256k", "--placement-a", "shared", "--placement-b", "os", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d, stderr %s", code, errOut)
	}
	var rep model.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("run --json: %v\n%s", err, out)
	}
	a, b := rep.Sides[0].Summary.Placement, rep.Sides[1].Summary.Placement
	if a.Setting != model.PlaceShared || b.Setting != model.PlaceOS {
		t.Fatalf("placements %+v, %+v", a, b)
	}
	if b.LoadCPUs != "any" || b.ServerCPUs != "any" {
		t.Errorf("os placement held processes: %+v", b)
	}
	if platform.PinSupported {
		if a.LoadCPUs == "any" || a.LoadCPUs != a.ServerCPUs {
			t.Errorf("shared placement: %+v", a)
		}
	}
}

// TestDoctorJSON: doctor --json carries its schema version and the build,
// with the platform facts at the top level.
func TestDoctorJSON(t *testing.T) {
	t.Setenv(asBinaryEnv, "1") // the fill probe's children are this test binary
	code, out, errs := runApp(t, "doctor", "--json")
	if code != 0 {
		t.Fatalf("doctor --json: exit %d: %s", code, errs)
	}
	var d struct {
		Version  int    `json:"version"`
		Nbdscope string `json:"nbdscope_version"`
		OS       string `json:"os"`
		Cores    int    `json:"cores"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	if d.Version != DoctorVersion || d.Nbdscope != model.Version || d.OS == "" || d.Cores < 1 {
		t.Errorf("doctor --json: %+v", d)
	}
}

// TestFaultLine: doctor prices a page fault per GiB of a process that
// faults a fresh buffer in for each request (262,144 faults), and warns
// from 2 µs a fault.
func TestFaultLine(t *testing.T) {
	cheap := faultLine(500 * time.Nanosecond)
	if !strings.HasPrefix(cheap, "✓ page faults: 0.5 µs each (64 MiB") || !strings.Contains(cheap, "pays 0.13 s per GiB") {
		t.Errorf("cheap: %q", cheap)
	}
	dear := faultLine(18 * time.Microsecond)
	if !strings.HasPrefix(dear, "▲ page faults: 18.0 µs each") || !strings.Contains(dear, "pays 4.7 s per GiB here") {
		t.Errorf("dear: %q", dear)
	}
}

// doctor's macOS emulation line says, off a Mac, that it is this kernel
// with macOS's buffer, not XNU, with the series' 12.6x from a real Mac; on
// a Mac it says nothing of the kind. It said only "(macOS default 8k)".
func TestDoctorMacOSEmulationLine(t *testing.T) {
	l := macOSEmulationLine(platform.Facts{OS: "linux", Kernel: "Linux 6.18.0"}, 8192)
	for _, want := range []string{"effective 8k", "this Linux 6.18.0 kernel with macOS's buffer, not XNU", "12.6x"} {
		if !strings.Contains(l, want) {
			t.Errorf("%q lacks %q", l, want)
		}
	}
	if l := macOSEmulationLine(platform.Facts{OS: "darwin"}, 8192); strings.Contains(l, "XNU") {
		t.Errorf("on a Mac: %q", l)
	}
}
