package plot

import (
	"math"
	"time"

	"nbdscope/model"
	"nbdscope/platform"
)

// fixture is a made-up run in alternate mode: side A reads (its client
// receives), side B writes (its server receives), each runs in turns of
// four 0.25 s samples and idles for the other's turn. B's throughput
// doubles at its change (4 s). One of A's samples has no server figure
// and one of B's an unknown throughput, so gaps and unknowns are covered.
func fixture() model.Report {
	rep := model.Report{
		Version:  model.ReportVersion,
		Nbdscope: "test",
		Time:     time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Preset:   "qemu-img",
		Platform: platform.Facts{OS: "linux", Arch: "amd64", Kernel: "Linux 6.1.0", Cores: 2,
			UnixSndbufDefault: 212992, UnixSndbufMax: 212992},
	}
	rep.Config.Mode, rep.Config.Interval = model.ModeAlternate, model.Duration(250*time.Millisecond)
	for i, w := range []model.Workload{model.WorkRead, model.WorkWrite} {
		sc := &rep.Config.Sides[i]
		sc.Name, sc.Workload, sc.Transport = string(rune('A'+i)), w, "unix"
		sc.Connections, sc.RequestSize, sc.InFlight = 1, 2<<20, 8
		sc.SndBuf = model.Buf{Kind: model.BufSize, Bytes: 2 << 20}
		rep.Sides = append(rep.Sides, model.SideReport{Name: sc.Name, Summary: model.Summary{Figures: model.Figures{
			Placement: model.Placement{Setting: model.PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}}}})
	}
	for k := 1; k <= 32; k++ {
		t := float64(k) * 0.25
		turn := (k - 1) / 4 % 2 // 0: A runs, 1: B runs
		for i := 0; i < 2; i++ {
			rep.Samples = append(rep.Samples, sample(i, t, turn == i, k))
		}
	}
	rep.Events = []model.Event{
		{T: 4, Side: "B", Setting: "sndbuf", From: "2m", To: "64k"},
		{T: 6, Side: "", Setting: "mode", From: "alternate", To: "concurrent"},
		{T: 7, Side: "A", Setting: "connections", From: "1", To: "2"},
	}
	return rep.WithStamps() // as the engine writes them: each sample with its settings
}

// sample is side i's k-th sample at t. A's figures: 2 GiB/s, client 8
// recv calls per 2 MiB, server 1; B's: 1 GiB/s (2 GiB/s after 4 s),
// server 3 recv calls (the receiver of writes), client 50.
func sample(i int, t float64, active bool, k int) model.Sample {
	s := model.Sample{T: t, Side: model.SideAt(i), Active: active}
	s.Seconds = 0.25
	srv := &model.Process{RecvCallsPer2MiB: 1, CoresBusy: 0.5}
	s.Server = srv
	s.SndBuf = model.Buffers{ServerRequested: "2m", ServerEffective: 4 << 20, ClientRequested: "default", ClientEffective: 212992}
	if !active {
		s.Seconds, s.ThroughputBps = 0, model.Unknown
		s.Client = model.Process{RecvCallsPer2MiB: model.Unknown, CoresBusy: 0}
		return s
	}
	if i == 0 {
		s.ThroughputBps = 2 << 30
		s.Client = model.Process{RecvCallsPer2MiB: 8, CoresBusy: 0.75}
		if k == 3 {
			s.Server = nil // no server figures: the CPU server line breaks
		}
		return s
	}
	s.ThroughputBps = 1 << 30
	if t > 4 {
		s.ThroughputBps = 2 << 30
	}
	if k == 6 {
		s.ThroughputBps = model.Figure(math.NaN())
	}
	s.Client = model.Process{RecvCallsPer2MiB: 50, CoresBusy: 0.25}
	srv.RecvCallsPer2MiB = 3
	return s
}
