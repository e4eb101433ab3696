package presets

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"nbdscope/model"
	"nbdscope/platform"
)

// testStore is a store in a fresh temporary directory.
func testStore(t *testing.T) *Store {
	t.Helper()
	d := t.TempDir()
	return &Store{PresetDir: filepath.Join(d, "presets"), RunDir: filepath.Join(d, "runs")}
}

// deepEqualNaN is reflect.DeepEqual with NaN equal to NaN, so that unknown
// figures compare equal.
func deepEqualNaN(a, b any) bool { return eqv(reflect.ValueOf(a), reflect.ValueOf(b)) }

func eqv(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || (math.IsNaN(x) && math.IsNaN(y))
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return eqv(a.Elem(), b.Elem())
	case reflect.Struct:
		if a.Type() == reflect.TypeOf(time.Time{}) {
			return a.Interface().(time.Time).Equal(b.Interface().(time.Time))
		}
		for i := 0; i < a.NumField(); i++ {
			if !eqv(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		fallthrough
	case reflect.Array:
		for i := 0; i < a.Len(); i++ {
			if !eqv(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			if !eqv(a.MapIndex(k), b.MapIndex(k)) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// noTempFiles fails when a directory holds leftovers of a save.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left behind in %s: %s", dir, e.Name())
		}
	}
}

// proc builds process figures; values have at most 6 significant digits,
// what a Figure keeps in JSON.
func proc(recv, user, sys, cpuPerGiB float64) model.Process {
	return model.Process{
		RecvCallsPer2MiB: model.Figure(recv), SendCallsPer2MiB: 1, EAGAINPer2MiB: model.Unknown,
		RecvCalls: 1000, SendCalls: 100, EAGAIN: 0,
		UserS: model.Figure(user), SysS: model.Figure(sys), CoresBusy: 0.5, CPUSPerGiB: model.Figure(cpuPerGiB),
	}
}

// testReport builds a two-side read report: A at 1.5e9 B/s with 10 recv
// calls per 2 MiB, B at 3e9 B/s with 1.25. Some figures are unknown, one
// sample has no server. Figures have at most 6 significant digits, what a
// Figure keeps in JSON.
func testReport() model.Report {
	cfg := model.DefaultConfig()
	cfg.Duration = model.Duration(10 * time.Second)
	srvA, srvB := proc(0.5, 0.25, 1.5, 0.2), proc(0.5, 0.125, 0.75, 0.1)
	r := model.Report{
		Version:  model.ReportVersion,
		Nbdscope: "0.1.0-test",
		Time:     time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC),
		Preset:   "linux-gap",
		Platform: platform.Facts{
			OS: "linux", Arch: "amd64", Kernel: "Linux 6.8.0", CPUModel: "Test CPU @ 3.00GHz", Cores: 2,
			UnixSndbufDefault: 212992, UnixRcvbufDefault: 212992, UnixSndbufMax: 425984,
			TCPSndbufDefault: 16384, TCPRcvbufDefault: 131072,
			Limits: map[string]int{"net.core.wmem_max": 212992}, Doubles: true,
		},
		Config: cfg,
		Sides: []model.SideReport{
			{Name: "A", Summary: model.Summary{Figures: model.Figures{
				Bytes: 15e9, Seconds: 10, ThroughputBps: 1.5e9,
				Client: proc(10, 0.5, 3.25, 0.375), Server: &srvA,
				SndBuf:       model.Buffers{ServerRequested: "default", ServerEffective: 212992, ClientRequested: "default", ClientEffective: 212992},
				LatencyP50Ms: 1.5, LatencyP99Ms: model.Unknown,
			}}},
			{Name: "B", Summary: model.Summary{Figures: model.Figures{
				Bytes: 30e9, Seconds: 10, ThroughputBps: 3e9,
				Client: proc(1.25, 0.25, 1.25, 0.0625), Server: &srvB,
				SndBuf:       model.Buffers{ServerRequested: "2m", ServerEffective: 4 << 20, ClientRequested: "default", ClientEffective: 212992},
				LatencyP50Ms: 0.75, LatencyP99Ms: 3,
			}}},
		},
		Events: []model.Event{
			{T: 0, Side: "B", Setting: "sndbuf", From: "default", To: "2m"},
			{T: 5.25, Side: "A", Setting: "connections", From: "1", To: "4"},
		},
		Warnings: []model.Warning{{T: 0.25, Side: "B", Kind: "clamp", Text: "SO_SNDBUF 2m clamped", Fix: "sudo sysctl -w net.core.wmem_max=2097152"}},
	}
	for i := 0; i < 4; i++ {
		sA, sB := proc(0.5, 0.25, 1.5, 0.2), proc(0.5, 0.125, 0.75, 0.1)
		r.Samples = append(r.Samples,
			model.Sample{T: float64(i) * 0.25, Side: "A", Active: true, Connections: 1, Figures: model.Figures{Seconds: 0.25, Bytes: 256 << 20,
				ThroughputBps: 1.5e9, Client: proc(10, 0.125, 0.75, 0.375), Server: &sA,
				SndBuf: model.Buffers{ServerRequested: "default", ServerEffective: 212992}, LatencyP50Ms: 1.5, LatencyP99Ms: model.Unknown}},
			model.Sample{T: float64(i) * 0.25, Side: "B", Active: i%2 == 0, Connections: 1, Figures: model.Figures{Seconds: 0.25, Bytes: 640 << 20,
				ThroughputBps: model.Unknown, Client: proc(1.25, 0.0625, 0.25, 0.0625), Server: &sB,
				SndBuf: model.Buffers{ServerRequested: "2m", ServerEffective: 4 << 20}, LatencyP50Ms: model.Unknown, LatencyP99Ms: 3}})
	}
	// A sample of an external target: no server figures.
	r.Samples = append(r.Samples, model.Sample{T: 1, Side: "A", Active: true, Figures: model.Figures{Seconds: 0.25, ThroughputBps: 5e8,
		Client: proc(2, 0.125, 0.25, 0.5), LatencyP50Ms: model.Unknown, LatencyP99Ms: model.Unknown}})
	return r
}
