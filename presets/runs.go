package presets

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"nbdscope/model"
)

// RunFile is a saved run: the on-disk form and what Run returns.
type RunFile struct {
	Version int          `json:"version"`
	Name    string       `json:"name"`
	Report  model.Report `json:"report"`
	// File is where the run was read from; empty for a run not read from
	// a store.
	File string `json:"-"`
}

// RunInfo is what a list of runs shows.
type RunInfo struct {
	Name   string
	File   string
	Time   time.Time
	Preset string
	Sides  []SideInfo
	// Partial: the run does not cover what was asked (a crash, an
	// interruption); Cause says why in a few words ("side A load died").
	Partial bool
	Cause   string
	// Sweep is the optimum of a saved sweep (sweep --save), nil for a
	// run: a sweep has rows per buffer, no sides' series over time.
	Sweep *model.SweepOptimum
}

// SideInfo is a side's headline figure.
type SideInfo struct {
	Name          string
	ThroughputBps model.Figure
}

// Throughput returns the throughput of the named side, Unknown when the run
// has no such side.
func (ri RunInfo) Throughput(side string) model.Figure {
	for _, s := range ri.Sides {
		if s.Name == side {
			return s.ThroughputBps
		}
	}
	return model.Unknown
}

// Info returns a run's list entry.
func (rf *RunFile) Info() RunInfo {
	ri := RunInfo{Name: rf.Name, File: rf.File, Time: rf.Report.Time, Preset: rf.Report.Preset,
		Partial: rf.Report.Partial, Cause: rf.Report.PartialCause()}
	if sw := rf.Report.Sweep; sw != nil {
		ri.Sweep = &model.SweepOptimum{Buffer: "n/a", ThroughputBps: model.Unknown, VsDefault: model.Unknown}
		if sw.Optimum != nil {
			ri.Sweep = sw.Optimum
		}
		return ri
	}
	for _, s := range rf.Report.Sides {
		ri.Sides = append(ri.Sides, SideInfo{Name: s.Name, ThroughputBps: s.Summary.ThroughputBps})
	}
	return ri
}

// parseRun reads a run file. Unknown fields are ignored: a run is a record
// and may carry fields a newer nbdscope of the same version added.
func parseRun(data []byte) (RunFile, error) {
	if err := checkHead(data); err != nil {
		return RunFile{}, err
	}
	var rf RunFile
	if err := json.Unmarshal(data, &rf); err != nil {
		return RunFile{}, jsonError(data, err)
	}
	if rf.Report.Version > model.ReportVersion {
		return RunFile{}, fmt.Errorf("report version %d is newer than this nbdscope (%s) reads (up to %d): upgrade nbdscope",
			rf.Report.Version, model.Version, model.ReportVersion)
	}
	return rf, nil
}

func (s *Store) runFile(name string) string { return name + fileExt }

// RunPath is the file a run saved under name is kept in ("" without a
// run directory).
func (s *Store) RunPath(name string) string {
	if s.RunDir == "" {
		return ""
	}
	return filepath.Join(s.RunDir, s.runFile(name))
}

// SaveRun writes a run under name, replacing an existing run only with
// force (ErrExists otherwise). A report without a version gets the current
// one.
func (s *Store) SaveRun(name string, r model.Report, force bool) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if r.Version == 0 {
		r.Version = model.ReportVersion
	}
	data, err := marshalIndent(RunFile{Version: FileVersion, Name: name, Report: r})
	if err != nil {
		return fmt.Errorf("saving run %q: %w", name, err)
	}
	if _, err := parseRun(data); err != nil {
		return fmt.Errorf("run %q would not load back: %w", name, err)
	}
	if len(data) > maxRunFile {
		return fmt.Errorf("run %q would not load back: %d bytes, over the store's limit of %d (a run this long: export it with --export-json FILE)", name, len(data), maxRunFile)
	}
	return writeNamed("run", s.RunDir, name, data, force)
}

// CheckRunName reports, before a run starts, whether SaveRun(name, …, force)
// would be refused: an invalid name, (without force) one that exists, or
// a run directory that cannot be written (it is created, and a file is
// made in it and removed again), so that a measurement is never made only
// to be lost.
func (s *Store) CheckRunName(name string, force bool) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if s.RunDir == "" {
		return fmt.Errorf("run %q: no run directory", name)
	}
	if !force {
		if _, err := os.Lstat(filepath.Join(s.RunDir, s.runFile(name))); err == nil {
			return fmt.Errorf("run %q %w", name, ErrExists)
		}
	}
	if err := checkWritable(s.RunDir); err != nil {
		return fmt.Errorf("run %q cannot be saved: %w", name, err)
	}
	return nil
}

// checkWritable makes dir (as a save does) and a file in it, and removes
// the file: what a save needs, tried.
func checkWritable(dir string) error {
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".write-check-*.tmp")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// loadRun reads a run file in RunDir. Errors name the file.
func (s *Store) loadRun(file string) (RunFile, error) {
	rf, name, path, err := loadFile("run", s.RunDir, file, maxRunFile, parseRun, nil)
	if err != nil {
		return RunFile{}, err
	}
	rf.Name, rf.File = name, path
	return rf, nil
}

// Run returns the saved run of that name.
func (s *Store) Run(name string) (RunFile, error) {
	return loadNamed("run", s.RunDir, name, s.loadRun)
}

// Runs lists the saved runs, oldest first. Each file that cannot be used
// yields an error naming the file and the problem; every other run still
// loads.
func (s *Store) Runs() ([]RunInfo, []error) {
	rfs, errs, err := loadAll(s.RunDir, s.loadRun)
	if err != nil {
		return nil, []error{fmt.Errorf("saved runs: %w", err)}
	}
	var out []RunInfo
	for _, rf := range rfs {
		out = append(out, rf.Info())
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, errs
}

// RemoveRun deletes a saved run.
func (s *Store) RemoveRun(name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	return removeNamed("run", s.RunDir, name)
}

// JSON is the run file as the store keeps it (runs export --format
// json): indented JSON of the current version.
func (rf RunFile) JSON() ([]byte, error) {
	if rf.Version == 0 {
		rf.Version = FileVersion
	}
	return marshalIndent(rf)
}
