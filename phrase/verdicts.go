package phrase

import (
	"fmt"
	"strconv"
	"strings"

	"nbdscope/model"
)

// MacOSEmulation words a run's mark that a side ran at macOS's 8 KiB
// buffer off a Mac: what ran, on what, and the series' figure from a real
// Mac beside it, the same in the summary, the markdown and the SVG.
func MacOSEmulation(e model.MacOSEmulation) string {
	who := make([]string, len(e.Sides))
	for i, s := range e.Sides {
		who[i] = string(s)
	}
	where := "(side " + strings.Join(who, ", ") + ")"
	if len(who) == 0 {
		where = "(the sweep's macos row)"
	}
	txt := "macOS's 8 KiB send buffer " + where + " ran on this " + e.Kernel +
		" kernel, not on XNU: the effect shown is this kernel's with a small buffer, not a Mac's"
	if e.SeriesSpeedup > 0 {
		txt += "; on a real Mac the series measured " + strconv.FormatFloat(e.SeriesSpeedup, 'f', -1, 64) +
			"x for qemu-img " + seriesVerb(e) + " at 2 MiB against the 8 KiB default (" + e.SeriesSource + ")"
	}
	return txt
}

// seriesVerb is what qemu-img did in the series' case: reading, or
// writing.
func seriesVerb(e model.MacOSEmulation) string {
	if e.Writes() {
		return "writing"
	}
	return "reading"
}

// MacOSEmulationNote is what the emulation is, for a line about it that
// names no side (doctor's): this kernel with macOS's buffer, not XNU, and
// the series' figure from a real Mac.
func MacOSEmulationNote(e model.MacOSEmulation) string {
	txt := "it is this " + e.Kernel + " kernel with macOS's buffer, not XNU"
	if e.SeriesSpeedup > 0 {
		txt += "; on a real Mac the series measured " + strconv.FormatFloat(e.SeriesSpeedup, 'f', -1, 64) + "x (qemu-img " + seriesVerb(e) + ", 2 MiB against 8 KiB)"
	}
	return txt
}

// MacOSEmulationForms are the mark's short forms, longest first, for a
// line that holds it while the emulation is in force (the explorer's
// header): the same three facts as MacOSEmulation (which sides, this
// kernel not XNU, the series' figure from a real Mac) in fewer words.
func MacOSEmulationForms(e model.MacOSEmulation) []string {
	who := make([]string, len(e.Sides))
	for i, s := range e.Sides {
		who[i] = string(s)
	}
	sides := strings.Join(who, ", ")
	if sides == "" {
		sides = "macos row"
	}
	kernel := e.Kernel
	short, _, _ := strings.Cut(kernel, "-")
	name, _, _ := strings.Cut(kernel, " ")
	mac := ""
	macShort := ""
	if e.SeriesSpeedup > 0 {
		x := strconv.FormatFloat(e.SeriesSpeedup, 'f', -1, 64) + "x"
		mac = " · a real Mac: " + x + " in the series (qemu-img " + seriesVerb(e) + ", 2 MiB against 8 KiB)"
		macShort = " · real Mac " + x
	}
	return []string{
		"▲ " + sides + ": macOS's 8 KiB send buffer, run on this " + kernel + " kernel, not XNU" + mac,
		"▲ " + sides + ": macOS's 8 KiB buffer on this " + short + " kernel, not XNU" + strings.TrimSuffix(mac, " (qemu-img "+seriesVerb(e)+", 2 MiB against 8 KiB)"),
		"▲ " + sides + ": macOS's 8k on this " + name + " kernel, not XNU" + strings.TrimSuffix(mac, " (qemu-img "+seriesVerb(e)+", 2 MiB against 8 KiB)"),
		"▲ " + sides + ": macOS's 8k on " + name + ", not XNU" + macShort,
		"▲ " + sides + ": macOS 8k on " + name + macShort,
	}
}

// Gap words what a run of the default pair showed of the buffer's effect
// (model.GapVerdictOf), doctor's last line; limitsOK is false when a
// limit or the placement already hides the effect (their lines say which).
// It promises the effect only where the pair showed it.
func Gap(v model.GapVerdict, limitsOK bool) string {
	calls := fmt.Sprintf("receive calls per 2 MiB B/A %s, throughput B/A %s", v.Calls.Cell(), v.Speed.Cell())
	switch v.Kind {
	case model.GapShown:
		if !limitsOK {
			return "This machine shows part of the effect (" + calls + "); the ✗ lines above say what hides the rest."
		}
		return "This machine shows the effect: at 2 MiB the client needed fewer receive calls and moved data faster (" + calls +
			"): try 'nbdscope' or 'nbdscope run'."
	case model.GapCallsOnly:
		return "This machine shows the calls fall but not the time (" + calls + "): " + gapPaceWhy(v) +
			"; 'nbdscope run' shows who sets the pace."
	case model.GapLittle:
		if v.Noisy {
			return "This machine showed little of the effect while other processes kept its cores busy (" + calls + "): run doctor again on a quiet machine."
		}
		return "This machine shows little of the effect (" + calls + "): the client's receive calls hardly fell, so the default buffer already bridges " +
			"its wake-ups here; " + gapPaceWhy(v) + "."
	}
	return "The effect was not judged: the probe's pair had too few turns of each side, or a figure was not measured (" + calls + ")."
}

// gapPaceWhy is what set the pace instead of the buffer, as far as the
// probe's figures tell.
func gapPaceWhy(v model.GapVerdict) string {
	switch {
	case v.Noisy:
		return "other processes kept the cores busy meanwhile, slowing both sides; run doctor again on a quiet machine"
	case v.ContendedA != "":
		return fmt.Sprintf("the CPUs were contended: at the default A's %s waited %s%% of the time for a core, which no buffer shortens",
			v.ContendedA, (100 * v.WaitingA).Fixed(0))
	case v.ClientFullA:
		return fmt.Sprintf("at the default the client already used all of its core (%s cores busy): its own work sets the pace, which no buffer speeds up", v.ClientBusyA.Fixed(2))
	}
	return "the client did not wait long enough on its buffer for a bigger one to save time"
}
