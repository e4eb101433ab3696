package clientrun

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"nbdscope/platform"
)

// GroupUsage is the CPU seconds, minor page faults and context switches of
// every process in process group pgid now, read from /proc: each one's own
// time and faults and those of the children it has waited for, and its
// switches from /proc/PID/status.
// ok is false when /proc cannot be read.
func GroupUsage(pgid int) (u Result, ok bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	if stats == nil {
		return u, false
	}
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile
		}
		// The command may hold spaces and parentheses: fields start
		// after the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		// f[0] is field 3 (state); pgrp is field 5, minflt and cminflt
		// 10 and 11, utime..cstime 14..17.
		if len(f) < 15 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		var ticks [4]float64
		for k := range ticks {
			ticks[k], _ = strconv.ParseFloat(f[11+k], 64)
		}
		u.UserS += (ticks[0] + ticks[2]) / platform.UserHZ
		u.SysS += (ticks[1] + ticks[3]) / platform.UserHZ
		for _, k := range []int{7, 8} {
			n, _ := strconv.ParseInt(f[k], 10, 64)
			u.MinFlt += n
		}
		v, nv := switches(filepath.Join(filepath.Dir(path), "status"))
		u.Nvcsw += v
		u.Nivcsw += nv
	}
	return u, true
}

// switches reads voluntary and involuntary context switches from a
// /proc/PID/status file.
func switches(path string) (v, nv int64) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		switch k {
		case "voluntary_ctxt_switches":
			v = n
		case "nonvoluntary_ctxt_switches":
			nv = n
		}
	}
	return v, nv
}
