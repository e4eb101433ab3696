package model

import (
	"encoding/json"
	"strings"
	"time"

	"nbdscope/internal/buildinfo"
	"nbdscope/platform"
)

// ReportVersion is the schema version of Report (run --json, saved runs).
// Version 2: a warning is a kind and its params (each --target warning a
// kind of its own, where all were "target"); version 1 reads as it was.
const ReportVersion = 2

// Version is nbdscope's version, recorded in reports: the module version
// and revision stamped into the binary (the same text as --version).
var Version = buildinfo.Read().Short()

// Report is a whole run: what `run --json` prints and what a saved run
// stores. The layout follows the command-line contract in design.md.
type Report struct {
	Version  int            `json:"version"`
	Nbdscope string         `json:"nbdscope_version"`
	Time     time.Time      `json:"time"`
	Preset   string         `json:"preset,omitempty"`
	Platform platform.Facts `json:"platform"`
	Config   Config         `json:"config"`
	Sides    []SideReport   `json:"sides"`
	Samples  []Sample       `json:"samples"`
	Events   []Event        `json:"events"`
	Crashes  []Crash        `json:"crashes,omitempty"`
	Warnings []Warning      `json:"warnings,omitempty"`
	// Sweep is set when the run saved is a sweep (sweep --save): its
	// report, rows and optimum; Sides and Samples are then empty.
	Sweep *SweepReport `json:"sweep,omitempty"`
	// Partial marks a run whose figures do not cover what was asked for:
	// a process died, or the run was interrupted before its duration.
	// PartialReason says why (each cause, "; " between them).
	Partial       bool   `json:"partial"`
	PartialReason string `json:"partial_reason,omitempty"`
	// OtherCoresBusy is how many cores other processes kept busy on
	// average while the run ran (the engine's machine meter); nil where
	// not measured. Above OtherCoresNoisy the figures are slowed by them.
	OtherCoresBusy *Figure `json:"other_cores_busy,omitempty"`
	// MacOS marks a run that put a side at macOS's 8 KiB buffer on another
	// kernel (MacOSEmulationOf); nil otherwise. Set by the engine and, for
	// a run saved before it was kept, when the run is read.
	MacOS *MacOSEmulation `json:"macos_emulation,omitempty"`
	// BOverA are side B's figures against A's, each judged by the one
	// noise rule over their batches (SidesDifferences), keyed by the
	// figure's CSV column: the B/A column of run's table. Set by the
	// engine, and when an older run is read.
	BOverA map[string]Difference `json:"b_over_a,omitempty"`
	// ControllerCoresBusy is the CPU nbdscope's own controller process
	// (which moves no data) spent over the same span, in cores busy on
	// average (getrusage of itself): what measuring cost the cores the
	// pair ran on. nil where not measured (a run saved before it was).
	ControllerCoresBusy *Figure `json:"controller_cores_busy,omitempty"`
}

// ControllerNoisy is the controller's own CPU, in cores busy, from which
// a run's summary says what it took: 2% of a core.
const ControllerNoisy = 0.02

// OtherCoresNoisy is the other processes' CPU, in cores busy on average,
// from which a run says its figures are slowed by them and judges no pace:
// a quarter of a core, well above what a quiet machine's daemons take.
const OtherCoresNoisy = 0.25

// Noisy reports whether other processes took enough CPU during the run to
// slow its figures.
func (r Report) Noisy() bool {
	return r.OtherCoresBusy != nil && r.OtherCoresBusy.Known() && *r.OtherCoresBusy >= OtherCoresNoisy
}

// UnmarshalJSON reads a report and settles its flows (SettleFlows): a run
// saved before they were kept reads with its receivers as they were.
func (r *Report) UnmarshalJSON(b []byte) error {
	type plain Report
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	r.SettleFlows()
	r.settleMacOS()
	if r.BOverA == nil {
		r.BOverA = SidesDifferences(*r)
	}
	return nil
}

// PartialCause is the first cause of a partial run in a few words ("side A
// load died", "interrupted after 3.0s of 10s"), for lists; "" when the run
// is complete.
func (r Report) PartialCause() string {
	if !r.Partial {
		return ""
	}
	first, _, _ := strings.Cut(r.PartialReason, "; ")
	if c, _, ok := strings.Cut(first, " ("); ok {
		first = c
	}
	first, _, _ = strings.Cut(first, ": ")
	if first == "" {
		return "partial"
	}
	return first
}

// SideReport is one side's summary.
type SideReport struct {
	Name    string  `json:"name"`
	Summary Summary `json:"summary"`
	// Segments are the summaries of each stretch of unchanged settings,
	// in time order (one for a run without changes).
	Segments []Segment `json:"segments,omitempty"`
	// FillSource is what measured the side's send-buffer fill:
	// FillSourceKernel, FillSourceEvents or FillSourceSampler ("" in runs saved before it
	// was kept, and where nothing measured it).
	FillSource string `json:"fill_source,omitempty"`
}

// Changed tells whether any side's settings changed during the run, so
// its summaries split into more than one segment.
func (r Report) Changed() bool {
	for _, s := range r.Sides {
		if len(s.Segments) > 1 {
			return true
		}
	}
	return false
}

// WithStamps returns the report with every sample and summary stamped
// with the settings it was measured under. Runs saved before figures
// carried their settings get the stamp of the run's starting
// configuration: the best that is known of them. The report itself is not
// changed (its slices are copied).
func (r Report) WithStamps() Report {
	stampOf := func(side SideID, idx int) Stamp {
		for _, sc := range r.Config.Sides {
			if sc.ID() == side {
				return StampOf(sc)
			}
		}
		if idx >= 0 && idx < len(r.Config.Sides) {
			return StampOf(r.Config.Sides[idx])
		}
		return Stamp{}
	}
	r.Samples = append([]Sample(nil), r.Samples...)
	for i := range r.Samples {
		if s := &r.Samples[i]; s.Settings == (Stamp{}) {
			s.Settings = stampOf(s.Side, -1)
		}
	}
	r.Sides = append([]SideReport(nil), r.Sides...)
	for i := range r.Sides {
		if s := &r.Sides[i]; s.Summary.Settings == (Stamp{}) {
			s.Summary.Settings = stampOf(s.ID(), i)
		}
	}
	return r
}
