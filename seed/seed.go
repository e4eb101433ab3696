// Package seed holds the qemu-devel series' measured tables ("io: Increase
// unix stream socket buffer size", v3, Nir Soffer, April 2025: the seed),
// as published, so that a sweep of the same client can print the series'
// own row beside each of ours. The data file is tables.tsv, embedded; its
// header names the commands and the machines, its last column the patch
// each row comes from.
package seed

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

//go:embed tables.tsv
var tablesTSV string

// Series names the source every row comes from, for a reader who wants
// to find it.
const Series = `the qemu-devel series "io: Increase unix stream socket buffer size" v3 (Nir Soffer, April 2025)`

// The seed's cases, as its tables name them; an exec sweep's spec names
// the one it reproduces (model.ExecSpec.Seed).
const (
	QemuImgRead  = "qemu-img read"
	QemuImgWrite = "qemu-img write"
	NbdcopyHash  = "nbdcopy --blkhash"
	Blksum       = "blksum"
)

// OS is the family of a seed table's platform.
type OS string

const (
	Linux OS = "Linux"
	MacOS OS = "macOS"
)

// Default is the buffer column's name for the OS's own default (8 KiB on
// macOS, 208 KiB on Linux).
const Default = "default"

// Row is one buffer size of one case on one platform.
type Row struct {
	// Buffer is "default" or the requested size in bytes, as published.
	Buffer string
	// Bytes is the requested size; 0 for the default.
	Bytes              int
	TimeS, UserS, SysS float64
}

// Table is one case on one platform: its rows in the published order
// (the default first), the speed-up at the optimum the patch states, and
// the patch it comes from.
type Table struct {
	Platform string // e.g. "Linux (Fedora 42 VM on MacBook Pro M2 Max)"
	OS       OS
	Case     string
	Speedup  float64
	Source   string
	Rows     []Row
}

// Lookup is the table of case c on OS os, if the series published one.
func Lookup(os OS, c string) (Table, bool) {
	for _, t := range tables {
		if t.OS == os && t.Case == c {
			return t, true
		}
	}
	return Table{}, false
}

// Default is the table's row at the OS default.
func (t Table) Default() (Row, bool) { return t.At(0) }

// At is the row at a requested size in bytes (0: the default).
func (t Table) At(bytes int) (Row, bool) {
	for _, r := range t.Rows {
		if r.Bytes == bytes {
			return r, true
		}
	}
	return Row{}, false
}

// VsDefault is the default row's time over r's: how many times faster
// than the default r was, as the series words its tables.
func (t Table) VsDefault(r Row) (float64, bool) {
	d, ok := t.Default()
	if !ok || r.TimeS <= 0 {
		return 0, false
	}
	return d.TimeS / r.TimeS, true
}

// Fastest is the row with the least time.
func (t Table) Fastest() Row {
	best := t.Rows[0]
	for _, r := range t.Rows[1:] {
		if r.TimeS < best.TimeS {
			best = r
		}
	}
	return best
}

// tables is tables.tsv parsed once; a malformed file is a build-time
// fault of ours, caught by the package's test, so it panics at init.
var tables = mustParse(tablesTSV)

func mustParse(s string) []Table {
	ts, err := parse(s)
	if err != nil {
		panic("seed: tables.tsv: " + err.Error())
	}
	return ts
}

// parse reads the TSV: '#' lines are comments, the first other line is
// the header, each row one buffer size of one case on one platform.
func parse(s string) ([]Table, error) {
	var out []Table
	header := true
	for i, line := range strings.Split(s, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if header {
			header = false
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 8 {
			return nil, fmt.Errorf("line %d: %d fields, want 8", i+1, len(f))
		}
		r, speedup, err := parseRow(f)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if n := len(out); n > 0 && out[n-1].Platform == f[0] && out[n-1].Case == f[1] {
			out[n-1].Rows = append(out[n-1].Rows, r)
			continue
		}
		out = append(out, Table{Platform: f[0], OS: osOf(f[0]), Case: f[1], Speedup: speedup, Source: f[7], Rows: []Row{r}})
	}
	return out, nil
}

func parseRow(f []string) (Row, float64, error) {
	r := Row{Buffer: f[2]}
	if f[2] != Default {
		n, err := strconv.Atoi(f[2])
		if err != nil || n <= 0 {
			return r, 0, fmt.Errorf("buffer_size %q is neither %q nor a size in bytes", f[2], Default)
		}
		r.Bytes = n
	}
	var nums [4]float64
	for i, s := range f[3:7] {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 {
			return r, 0, fmt.Errorf("%q is not a number of seconds or a speed-up", s)
		}
		nums[i] = v
	}
	r.TimeS, r.UserS, r.SysS = nums[0], nums[1], nums[2]
	return r, nums[3], nil
}

func osOf(platform string) OS {
	if strings.HasPrefix(platform, string(MacOS)) {
		return MacOS
	}
	return Linux
}

func (o OS) String() string { return string(o) }

// Patch is the source's patch title alone, without its author and list:
// "[PATCH v3 2/2] io: Increase unix socket buffers on Linux".
func (t Table) Patch() string {
	if i := strings.Index(t.Source, " ("); i > 0 {
		return t.Source[:i]
	}
	return t.Source
}
