package model

import (
	"slices"
	"strings"

	"nbdscope/platform"
	"nbdscope/seed"
)

// MacOSEmulation marks a run in which a side's send buffer was macOS's
// 8 KiB default on a kernel that is not XNU (the macos-gap preset, the
// explorer's g): the effect it shows is this kernel's with a small
// buffer, not a Mac's, and a user quoting its B/A as "macOS" would be
// wrong by a factor (47x here against the 12.6x the series measured on a
// real Mac). Every output says so, from this one value.
type MacOSEmulation struct {
	// Sides are the sides that ran at macOS's buffer at any time; none in
	// a sweep, where it is the macos row (MacOSEmulationSwept).
	Sides []SideID `json:"sides"`
	// Kernel is this machine's kernel ("Linux 6.18.0").
	Kernel string `json:"kernel"`
	// SeriesSpeedup is what the series measured on a real Mac: qemu-img
	// reading (12.6x), or writing (9.2x) where every side marked writes,
	// the default 8 KiB against 2 MiB; SeriesCase is which (package
	// seed's case), SeriesSource its patch.
	SeriesSpeedup float64 `json:"series_speedup"`
	SeriesCase    string  `json:"series_case,omitempty"`
	SeriesSource  string  `json:"series_source"`
}

// Writes reports whether the series' figure is qemu-img's writing.
func (e MacOSEmulation) Writes() bool { return e.SeriesCase == seed.QemuImgWrite }

// MacOSEmulationOf is the run's mark, or nil where no side ran at macOS's
// buffer or the run was on macOS itself: a side configured at "macos", or
// changed to it by a scripted or live change, on either send buffer (the
// server's, the bulk sender of reads; the client's, of writes).
func MacOSEmulationOf(r Report) *MacOSEmulation {
	var sides []SideID
	writes := true
	for _, s := range r.Config.Sides {
		id := SideID(strings.ToUpper(s.Name))
		if atMacOS(s) || changedTo(r.Events, id, Buf{Kind: BufMacOS}.String()) {
			sides = append(sides, id)
			writes = writes && s.Workload == WorkWrite
		}
	}
	return macOSEmulation(r.Platform, sides, writes)
}

// MacOSEmulationNow is the mark while the emulation is in force: the
// sides whose send buffer is macOS's in c now, on a kernel that is not
// XNU (the explorer's header shows it from this); nil otherwise.
func MacOSEmulationNow(facts platform.Facts, c Config) *MacOSEmulation {
	var sides []SideID
	writes := true
	for _, s := range c.Sides {
		if atMacOS(s) {
			sides = append(sides, SideID(strings.ToUpper(s.Name)))
			writes = writes && s.Workload == WorkWrite
		}
	}
	return macOSEmulation(facts, sides, writes)
}

// MacOSEmulationSwept is a sweep's mark, where one of its sizes is
// macOS's buffer (sweep --sndbuf macos,2m) on a kernel that is not XNU;
// nil otherwise.
func MacOSEmulationSwept(facts platform.Facts, spec SweepSpec, w Workload) *MacOSEmulation {
	for _, b := range spec.Sizes {
		if b.Kind == BufMacOS {
			return macOSEmulation(facts, []SideID{}, w == WorkWrite)
		}
	}
	return nil
}

// MacOSEmulationFor is the mark of sides at macOS's buffer on the
// platform f, their load's workload w (a line of --intervals, when a
// side's samples first show it); nil on macOS itself.
func MacOSEmulationFor(f platform.Facts, w Workload, sides ...SideID) *MacOSEmulation {
	return macOSEmulation(f, append([]SideID{}, sides...), w == WorkWrite)
}

// atMacOS reports whether a side's server or client send buffer is
// macOS's.
func atMacOS(s SideConfig) bool {
	return s.SndBuf.Kind == BufMacOS || s.ClientSndBuf.Kind == BufMacOS
}

// macOSEmulation is the mark of sides at macOS's buffer on the platform
// f, with the series' figure from a real Mac for qemu-img reading, or
// writing when writes; nil for no side, or on macOS itself.
func macOSEmulation(f platform.Facts, sides []SideID, writes bool) *MacOSEmulation {
	if sides == nil || strings.EqualFold(f.OS, "darwin") {
		return nil
	}
	kernel := f.Kernel // "Linux 6.18.0": uname's name and release
	if kernel == "" {
		kernel = f.OS
	}
	e := &MacOSEmulation{Sides: sides, Kernel: kernel}
	e.setSeries(writes)
	return e
}

// setSeries sets the series' figure from a real Mac: qemu-img reading,
// or writing when writes.
func (e *MacOSEmulation) setSeries(writes bool) {
	c := seed.QemuImgRead
	if writes {
		c = seed.QemuImgWrite
	}
	e.SeriesSpeedup, e.SeriesCase, e.SeriesSource = 0, "", ""
	if t, ok := seed.Lookup(seed.MacOS, c); ok {
		e.SeriesSpeedup, e.SeriesCase, e.SeriesSource = t.Speedup, c, t.Patch()
	}
}

// settleMacOS gives a run read from a file its mark (MacOSEmulationOf)
// where it has none, and the series' figure of its marked sides'
// workload where it has one: the figure is derived, never read. A run
// saved before write sides had the writing figure (9.2x) stored the
// reading one (12.6x) for them, with no series_case, and runs show, the
// explorer's loaded runs, the SVG and the CSV gave 12.6x beside a
// write's B/A.
func (r *Report) settleMacOS() {
	if r.MacOS == nil {
		r.MacOS = MacOSEmulationOf(*r)
		return
	}
	writes := len(r.MacOS.Sides) > 0
	for _, id := range r.MacOS.Sides {
		i := slices.IndexFunc(r.Config.Sides[:], func(s SideConfig) bool { return SideID(strings.ToUpper(s.Name)) == id })
		writes = writes && i >= 0 && r.Config.Sides[i].Workload == WorkWrite
	}
	r.MacOS.setSeries(writes)
}

// settleMacOS gives a sweep read from a file the series' figure of its
// workload (side A's, as MacOSEmulationSwept is given it): a sweep saved
// before write sweeps had the writing figure stored the reading one.
func (r *SweepReport) settleMacOS() {
	if r.MacOS != nil && len(r.Config.Sides) > 0 {
		r.MacOS.setSeries(r.Config.Sides[0].Workload == WorkWrite)
	}
}

// changedTo reports whether an event set side's send buffer (the
// server's or the client's) to value.
func changedTo(evs []Event, side SideID, value string) bool {
	for _, e := range evs {
		if (e.Setting == SetSndBuf || e.Setting == SetClientSndBuf) && e.To == value && (e.Side == side || e.Side == WholePair) {
			return true
		}
	}
	return false
}
