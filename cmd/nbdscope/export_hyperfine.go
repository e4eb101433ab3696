package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"nbdscope/model"
	"nbdscope/stats"
	"nbdscope/units"
)

// sweep --export-hyperfine FILE writes hyperfine's --export-json layout
// (hyperfine's src/export/json.rs and src/benchmark/benchmark_result.rs),
// so that its scripts (plot_parametrized.py, plot_whisker.py,
// advanced_statistics.py, welch_ttest.py) read a sweep unchanged: one
// result per buffer size, its times the row's measurements.

// hyperfineFile is hyperfine's HyperfineSummary.
type hyperfineFile struct {
	Results []hyperfineResult `json:"results"`
}

// hyperfineResult is hyperfine's BenchmarkResult, its fields in its order
// and with its types: seconds as numbers, stddev null with one time (an
// Option there), parameters as strings. memory_usage_byte, optional there,
// is left out: nbdscope does not measure it per run.
type hyperfineResult struct {
	Command    string            `json:"command"`
	Mean       float64           `json:"mean"`
	Stddev     *float64          `json:"stddev"`
	Median     float64           `json:"median"`
	User       float64           `json:"user"`
	System     float64           `json:"system"`
	Min        float64           `json:"min"`
	Max        float64           `json:"max"`
	Times      []float64         `json:"times"`
	ExitCodes  []int             `json:"exit_codes"`
	Parameters map[string]string `json:"parameters"`
}

// writeSweepHyperfine writes the hyperfine file of a sweep. A row whose
// measurements were not kept (a sweep saved before they were) has its
// median time alone.
func writeSweepHyperfine(w io.Writer, rep model.SweepReport) error {
	name, value := hyperfineParameter(rep)
	out := hyperfineFile{Results: []hyperfineResult{}}
	for _, r := range rep.Rows {
		ms := r.Measurements
		if len(ms) == 0 {
			ms = []model.SweepMeasurement{{Seconds: r.Seconds, ClientUserS: r.ClientUserS, ClientSysS: r.ClientSysS}}
		}
		res := hyperfineResult{Command: hyperfineCommand(rep, r), Parameters: map[string]string{name: value(r)}}
		var user, sys float64
		for _, m := range ms {
			res.Times = append(res.Times, m.Seconds)
			// A measurement that failed stops the sweep: every one kept
			// exited 0.
			res.ExitCodes = append(res.ExitCodes, 0)
			user += m.ClientUserS
			sys += m.ClientSysS
		}
		s := stats.Of(res.Times)
		res.Mean, res.Median, res.Min, res.Max = s.Mean, s.Median, s.Min, s.Max
		if s.N > 1 {
			sd := s.Stddev
			res.Stddev = &sd
		}
		res.User, res.System = user/float64(len(ms)), sys/float64(len(ms))
		out.Results = append(out.Results, res)
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// hyperfineParameter is the one parameter each result carries, and its
// value for a row. plot_parametrized.py reads the value with float(), so
// it is a number: the buffer's effective size in bytes, what the socket
// had (Linux doubles a request), the OS default among the others on one
// axis, and the name says so: "sndbuf_effective_bytes". Where a row's
// effective size is unknown, the values are the sizes as swept ("2m",
// "default"), as hyperfine's -L writes them, under the setting's name.
func hyperfineParameter(rep model.SweepReport) (string, func(model.SweepRow) string) {
	setting := rep.Spec.Setting
	if setting == "" {
		setting = model.DefaultSweepSetting
	}
	for _, r := range rep.Rows {
		if r.Effective <= 0 {
			return setting, func(r model.SweepRow) string { return r.Buffer }
		}
	}
	key := strings.ReplaceAll(setting, "-", "_") + "_effective_bytes"
	return key, func(r model.SweepRow) string { return strconv.Itoa(r.Effective) }
}

// hyperfineCommand is a result's command, which hyperfine's scripts
// label it by: the client's command line of an exec sweep with the size
// after it, "nbdcopy {uri} null: (sndbuf=2m)", as hyperfine's -L puts
// its parameter into each command (the buffer is not in the client's
// line, and one label for every size made one name of every box); for
// our load, what it is, e.g. "nbdscope load: 1 conn, 8×2m read, unix,
// sndbuf=2m".
func hyperfineCommand(rep model.SweepReport, r model.SweepRow) string {
	if x := rep.Spec.Exec; x != nil {
		setting := rep.Spec.Setting
		if setting == "" {
			setting = model.DefaultSweepSetting
		}
		return fmt.Sprintf("%s (%s=%s)", x.Command, setting, r.Buffer)
	}
	return loadDescription(rep.Config.Sides[0], rep.Spec.Setting, r.Buffer)
}

// loadDescription describes our load on a side with the swept setting at
// buf.
func loadDescription(sd model.SideConfig, setting, buf string) string {
	if setting == "" {
		setting = model.DefaultSweepSetting
	}
	conns := fmt.Sprintf("%d conns", sd.Connections)
	if sd.Connections == 1 {
		conns = "1 conn"
	}
	return fmt.Sprintf("nbdscope load: %s, %d×%s %s, %s, %s=%s", conns, sd.InFlight, units.FormatSize(int64(sd.RequestSize)),
		sd.Workload, sd.Transport, setting, buf)
}
