package engine

import (
	"sync"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/platform"
)

// machineMeter measures what the rest of the machine took while a run
// ran: the CPU the whole machine spent busy (platform.CPUBusy) between the
// first poll and the latest, less what nbdscope's own processes spent (the
// samples' client and server CPU, and this controller's). Other processes
// on the cores slow every figure, and a process kept off its core looks
// like one that waited for its peer; the report says so instead of
// leaving it to be guessed (Report.OtherCoresBusy).
type machineMeter struct {
	mu          sync.Mutex
	ok          bool
	first, last MachineReading
}

// MachineReading is the machine's busy CPU and this controller's own at one
// moment: what OthersBetween subtracts (a run's meter, a sweep's client
// runs).
type MachineReading struct {
	t          time.Time
	busy, self float64 // machine busy and controller CPU seconds
}

// ReadMachine takes a reading; false when the machine's busy CPU cannot be
// read here.
func ReadMachine() (MachineReading, bool) {
	busy, ok := platform.CPUBusy()
	c := wire.SelfCounters(nbd.IOStats{})
	return MachineReading{t: time.Now(), busy: busy, self: c.UserS + c.SysS}, ok
}

// start takes the reading the run is measured from (at the baseline poll).
func (m *machineMeter) start() {
	r, ok := ReadMachine()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.first, m.last, m.ok = r, r, ok
}

// tick takes the latest reading (after each round of polls).
func (m *machineMeter) tick() {
	r, ok := ReadMachine()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last, m.ok = r, m.ok && ok
}

// otherCoresBusy is the cores other processes kept busy on average, given
// the samples' CPU of nbdscope's children over the same span; nil when it
// was not measured.
func (m *machineMeter) otherCoresBusy(samples []model.Sample) *model.Figure {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ok {
		return nil
	}
	var children float64
	for _, s := range samples {
		children += cpuOf(&s.Client)
		if s.Server != nil {
			children += cpuOf(s.Server)
		}
	}
	return OthersBetween(m.first, m.last, children)
}

// OthersBetween is the cores other processes kept busy on average between
// two readings, given the CPU seconds nbdscope's children spent meanwhile
// (the controller's own is in the readings); nil for an empty span.
func OthersBetween(from, to MachineReading, children float64) *model.Figure {
	wall := to.t.Sub(from.t).Seconds()
	if wall <= 0 {
		return nil
	}
	ours := children + (to.self - from.self)
	f := model.Figure(max(0, (to.busy-from.busy)-ours) / wall)
	return &f
}

// cpuOf is a process's user+system seconds, 0 when not measured.
func cpuOf(p *model.Process) float64 {
	if !p.UserS.Known() || !p.SysS.Known() {
		return 0
	}
	return float64(p.UserS + p.SysS)
}
