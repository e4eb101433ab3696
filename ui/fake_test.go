package ui

import (
	"errors"
	"sync"
	"time"

	"nbdscope/model"
	"nbdscope/platform"
)

// fakeCtrl is a Controller for tests: it keeps a configuration (changed
// with the engine's own validation), records every call, and lets the test
// push updates.
type fakeCtrl struct {
	mu       sync.Mutex
	cfg      model.Config
	facts    platform.Facts
	updates  chan model.Update
	elapsed  time.Duration
	applied  []model.Change
	modes    []model.Mode
	pauses   []pauseCall
	restarts []int
	stops    int
	applyErr error // returned by Apply when set
	ownCPU   time.Duration
	ownNA    bool // OwnCPU cannot be read
}

type pauseCall struct {
	side   int
	paused bool
}

func newFake() *fakeCtrl {
	cfg := model.DefaultConfig()
	cfg.Mode = model.ModeAlternate
	for i := range cfg.Sides { // the default depends on the machine; screens must not
		cfg.Sides[i].Placement = model.PlaceSplit
	}
	return &fakeCtrl{
		cfg: cfg,
		facts: platform.Facts{
			OS: "linux", Arch: "amd64", Kernel: "Linux 6.1.0-18-amd64", Cores: 2,
			UnixSndbufDefault: 212992, UnixRcvbufDefault: 212992, UnixSndbufMax: 425984,
			Limits:  map[string]int{"net.core.wmem_max": 212992},
			Doubles: true,
		},
		updates: make(chan model.Update, 4096),
		elapsed: 42 * time.Second,
	}
}

func (f *fakeCtrl) Config() model.Config {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cfg
}

func (f *fakeCtrl) Facts() platform.Facts        { return f.facts }
func (f *fakeCtrl) Updates() <-chan model.Update { return f.updates }

func (f *fakeCtrl) Elapsed() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.elapsed
}

func (f *fakeCtrl) OwnCPU() (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ownCPU, !f.ownNA
}

// at sets the run's clock and the controller's CPU so far.
func (f *fakeCtrl) at(elapsed, cpu time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.elapsed, f.ownCPU = elapsed, cpu
}

func (f *fakeCtrl) Apply(ch model.Change) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied = append(f.applied, ch)
	if f.applyErr != nil {
		return f.applyErr
	}
	if ch.Side < 0 || ch.Side > 1 {
		return errors.New("bad side")
	}
	sc := f.cfg.Sides[ch.Side]
	st := ch.Setting
	if st == nil {
		return errors.New("a change of no setting")
	}
	if err := sc.SetValue(st, ch.Value); err != nil {
		return err
	}
	f.cfg.Sides[ch.Side] = sc
	return nil
}

func (f *fakeCtrl) SetMode(mode model.Mode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.modes = append(f.modes, mode)
	if mode != model.ModeAlternate && mode != model.ModeConcurrent {
		return errors.New("bad mode")
	}
	f.cfg.Mode = mode
	return nil
}

func (f *fakeCtrl) SetPaused(side int, paused bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pauses = append(f.pauses, pauseCall{side, paused})
	return nil
}

func (f *fakeCtrl) Restart(side int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.restarts = append(f.restarts, side)
	return nil
}

func (f *fakeCtrl) Stop() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops++
	return nil
}

func (f *fakeCtrl) push(u model.Update) { f.updates <- u }

// Accessors for assertions.
func (f *fakeCtrl) appliedCopy() []model.Change {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]model.Change(nil), f.applied...)
}

func (f *fakeCtrl) stopCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stops
}

// sample builds a deterministic sample of a side at time t: throughput,
// calls and CPU shaped like the real effect (A at the default buffer needs
// ~10 calls per 2 MiB, B at 2m about one).
func sample(side model.SideID, t float64, active bool) model.Sample {
	s := model.Sample{T: t, Side: side, Active: active, Connections: 1}
	s.Seconds = 0.25
	s.Errors = ptr(uint64(0)) // our load's requests are seen
	s.Placement = model.Placement{Setting: model.PlaceSplit, LoadCPUs: "0", ServerCPUs: "1"}
	srv := model.Process{RecvCallsPer2MiB: 0.01, SendCallsPer2MiB: 1, EAGAINPer2MiB: 0, UserS: 0.01, SysS: 0.05}
	if side == "A" {
		s.ThroughputBps = model.Figure(1.5*(1<<30) + 0.1*(1<<30)*float64(int(t*4)%5))
		s.Client = model.Process{RecvCallsPer2MiB: 10.2, SendCallsPer2MiB: 0.25, EAGAINPer2MiB: 3.1, RecvEAGAINPer2MiB: 3.1,
			VolCSPer2MiB: 12.4, InvolCSPer2MiB: 0.3, CoresBusy: 0.92, CPUSPerGiB: 0.61}
		srv.SendEAGAINPer2MiB, srv.VolCSPer2MiB = 2.2, 3.6
		srv.CoresBusy, srv.CPUSPerGiB = 0.58, 0.38
		s.SndBuf = model.Buffers{ServerRequested: "default", ServerEffective: 212992, ClientRequested: "default", ClientEffective: 212992, ClientRcvRequested: "default", ClientRcvEffective: 212992}
		s.LatencyP50Ms, s.LatencyP99Ms = 9.8, 14.2
		s.SetFill(model.Fill{Samples: 50, FullPct: 97, EmptyPct: 1, Bytes: 200000, Limit: 212992})
	} else {
		s.ThroughputBps = model.Figure(4.0*(1<<30) + 0.2*(1<<30)*float64(int(t*4)%3))
		s.Client = model.Process{RecvCallsPer2MiB: 1.04, SendCallsPer2MiB: 0.25, EAGAINPer2MiB: 0.2, RecvEAGAINPer2MiB: 0.2,
			VolCSPer2MiB: 1.9, InvolCSPer2MiB: 0.1, CoresBusy: 0.71, CPUSPerGiB: 0.18}
		srv.SendEAGAINPer2MiB, srv.VolCSPer2MiB = 0.1, 1.2
		srv.CoresBusy, srv.CPUSPerGiB = 0.35, 0.09
		s.SndBuf = model.Buffers{ServerRequested: "2m", ServerEffective: 425984, ClientRequested: "default", ClientEffective: 212992, ClientRcvRequested: "default", ClientRcvEffective: 212992, Clamped: true}
		s.LatencyP50Ms, s.LatencyP99Ms = 3.9, 6.1
		s.SetFill(model.Fill{Samples: 50, FullPct: 2, EmptyPct: 81, Bytes: 30000, Limit: 425984})
	}
	s.Server = &srv
	s.Bytes = uint64(float64(s.ThroughputBps) * s.Seconds)
	if !active {
		// Off its turn: the engine's sample carries the turn's figures
		// (model.Sample.Turn), here the active sample's.
		turn := sample(side, t, true).Figures
		s.ThroughputBps, s.Bytes, s.Turn = 0, 0, &turn
		return s
	}
	return withRecent(s)
}

// withRecent gives an active sample its recent figures, as the engine's
// meter would over samples like it: its own.
func withRecent(s model.Sample) model.Sample {
	r := s.Figures
	s.Recent = &r
	return s
}
