package engine

import (
	"fmt"
	"strconv"
	"strings"

	"nbdscope/engine/platform"
)

// Placements (SideConfig.Placement): where a side's two processes run.
//
// Placement decides whether the socket's send buffer shows at all. A small
// buffer makes the sender stop every ~200 KiB (Linux default) until the
// receiver has drained it; when the two processes sit on different cores,
// each of those stops is a sleep and a cross-core wake-up, and that is what
// makes a small buffer slow. On one core the hand-over is a cheap context
// switch and the buffer hardly matters. Left to the scheduler, a 2-core
// machine flips between the two from run to run (a bare copy loop at the
// default buffer measured anywhere from 1.1 to 3.8 GiB/s on a 2-core
// VM), so nbdscope holds its processes to cores like iperf3 -A and fio's
// cpus_allowed do, and reports where they ran.
const (
	PlaceSplit  = "split"  // server and load process each held to a core of its own (the default)
	PlaceShared = "shared" // both held to one core
	PlaceOS     = "os"     // not held: the scheduler decides
)

// Placements lists the placements in the order the UI cycles them.
var Placements = []string{PlaceSplit, PlaceShared, PlaceOS}

// DefaultPlacement is split where processes can be held to cores and the
// machine lets this process use at least two; otherwise os.
func DefaultPlacement() string {
	if platform.PinSupported && len(platform.AllowedCPUs()) >= 2 {
		return PlaceSplit
	}
	return PlaceOS
}

// PlacementCPUs returns the CPUs side i's load process and server are held
// to (nil: not held) out of the allowed ones. In alternate mode the sides
// never run at once, so both use the first two cores; in concurrent mode,
// with four or more cores, side B takes the next two so the sides do not
// share a core. With fewer, concurrent sides share cores (and the pair
// warns that they compete).
func PlacementCPUs(placement, mode string, side int, allowed []int) (load, server []int) {
	if placement == PlaceOS || len(allowed) == 0 {
		return nil, nil
	}
	base := 0
	if mode == ModeConcurrent && len(allowed) >= 4 {
		base = 2 * side
	}
	load = []int{allowed[base]}
	server = load
	if placement == PlaceSplit && len(allowed) >= base+2 {
		server = []int{allowed[base+1]}
	}
	return load, server
}

// cpuList is the text form of a CPU list in samples: "1", "0,1", or "any"
// when the process is not held.
func cpuList(cpus []int) string {
	if len(cpus) == 0 {
		return "any"
	}
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

// placeSide holds side s's processes where its placement says and records
// where they are. The caller holds p.mu; a non-empty result is a warning
// to emit after unlocking (placement is then left to the scheduler).
func (p *Pair) placeSide(s *side) string {
	sc := p.cfg.Sides[s.idx]
	pl := sc.Placement
	if pl == "" {
		pl = DefaultPlacement()
	}
	load, server := PlacementCPUs(pl, p.cfg.Mode, s.idx, p.cpus)
	if pl == PlaceSplit && sc.Get(SetConsume) == ConsumeHash && ResolveHashThreads(sc, p.cfg.Mode, p.cpus) > 1 {
		load = hashLoadCPUs(p.cfg.Mode, sc.Name, p.cpus, server) // room for the hash threads
	}
	if pl != PlaceOS && !platform.PinSupported {
		s.loadCPUs, s.serverCPUs = nil, nil
		return fmt.Sprintf("placement %s: %v; the scheduler places side %s's processes", pl, platform.ErrPinUnsupported, s.name)
	}
	var errs []string
	pin := func(c *child, cpus []int) []int {
		if c == nil || c.cmd.Process == nil {
			return nil
		}
		if err := platform.PinProcess(c.cmd.Process.Pid, cpus); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", c.role, err))
			return nil
		}
		return cpus
	}
	s.loadCPUs = pin(s.load, load)
	s.serverCPUs = pin(s.server, server)
	if len(errs) > 0 {
		return fmt.Sprintf("side %s placement %s failed (%s); the scheduler places what could not be held", s.name, pl, strings.Join(errs, "; "))
	}
	return ""
}

// placement is what a sample reports of where side s ran.
func (p *Pair) placement(s *side) Placement {
	sc := p.cfg.Sides[s.idx]
	pl := Placement{Setting: sc.Get(SetPlacement), LoadCPUs: cpuList(s.loadCPUs), ServerCPUs: "n/a"}
	if sc.Target == "" {
		pl.ServerCPUs = cpuList(s.serverCPUs)
	}
	return pl
}
