package model

import (
	"strconv"
	"strings"

	"nbdscope/platform"
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
	PlaceSplit  Place = "split"  // server and load process each held to a core of its own (the default)
	PlaceShared Place = "shared" // both held to one core
	PlaceOS     Place = "os"     // not held: the scheduler decides
)

// Place is the placement setting: one of the placements above. It is not
// called Placement because that name is taken by what a figure reports of
// where the processes ran (metrics.go: the setting and the CPUs each was
// held to), of which a Place is one field. JSON, presets and the command
// line write its name.
type Place string

// Placements lists the placements in the order the UI cycles them.
var Placements = []Place{PlaceSplit, PlaceShared, PlaceOS}

// DefaultPlacement is split where processes can be held to cores and the
// machine lets this process use at least two; otherwise os.
func DefaultPlacement() Place {
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
func PlacementCPUs(placement Place, mode Mode, side int, allowed []int) (load, server []int) {
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

// CPUList is the text form of a CPU list in samples: "1", "0,1", or "any"
// when the process is not held.
func CPUList(cpus []int) string {
	if len(cpus) == 0 {
		return "any"
	}
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}
