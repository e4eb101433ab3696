package model

import (
	"strings"

	"nbdscope/seed"
)

// MacOSEmulation marks a run in which a side's send buffer was macOS's
// 8 KiB default on a kernel that is not XNU (the macos-gap preset, the
// explorer's g): the effect it shows is this kernel's with a small
// buffer, not a Mac's, and a user quoting its B/A as "macOS" would be
// wrong by a factor (47x here against the 12.6x the series measured on a
// real Mac). Every output says so, from this one value.
type MacOSEmulation struct {
	// Sides are the sides that ran at macOS's buffer at any time.
	Sides []SideID `json:"sides"`
	// Kernel is this machine's kernel ("Linux 6.18.0").
	Kernel string `json:"kernel"`
	// SeriesSpeedup is what the series measured on a real Mac: qemu-img
	// reading, the default 8 KiB against 2 MiB; SeriesSource its patch.
	SeriesSpeedup float64 `json:"series_speedup"`
	SeriesSource  string  `json:"series_source"`
}

// MacOSEmulationOf is the run's mark, or nil where no side ran at macOS's
// buffer or the run was on macOS itself: a side configured at "macos", or
// changed to it by a scripted or live change.
func MacOSEmulationOf(r Report) *MacOSEmulation {
	if strings.EqualFold(r.Platform.OS, "darwin") {
		return nil
	}
	macos := Buf{Kind: BufMacOS}.String()
	var sides []SideID
	for _, s := range r.Config.Sides {
		id := SideID(strings.ToUpper(s.Name))
		if s.SndBuf.Kind == BufMacOS || changedTo(r.Events, id, macos) {
			sides = append(sides, id)
		}
	}
	if len(sides) == 0 {
		return nil
	}
	kernel := r.Platform.Kernel // "Linux 6.18.0": uname's name and release
	if kernel == "" {
		kernel = r.Platform.OS
	}
	e := &MacOSEmulation{Sides: sides, Kernel: kernel}
	if t, ok := seed.Lookup(seed.MacOS, seed.QemuImgRead); ok {
		e.SeriesSpeedup, e.SeriesSource = t.Speedup, t.Patch()
	}
	return e
}

// changedTo reports whether an event set side's send buffer to value.
func changedTo(evs []Event, side SideID, value string) bool {
	for _, e := range evs {
		if e.Setting == SetSndBuf && e.To == value && (e.Side == side || e.Side == WholePair) {
			return true
		}
	}
	return false
}
