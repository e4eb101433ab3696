package engine

import (
	"time"

	"nbdscope/engine/platform"
)

// ReportVersion is the schema version of Report (run --json, saved runs).
const ReportVersion = 1

// Version is nbdscope's version, recorded in reports.
var Version = "0.1.0"

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
}

// SideReport is one side's summary.
type SideReport struct {
	Name    string  `json:"name"`
	Summary Summary `json:"summary"`
}
