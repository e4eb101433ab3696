package interop

// `nbdscope serve --stats` watched by a real client (issue 15 §4).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// statsLine is one "stats k=v …" line of serve --stats.
type statsLine map[string]string

func parseStats(t *testing.T, out string) []statsLine {
	t.Helper()
	var lines []statsLine
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "stats ") {
			continue
		}
		m := statsLine{}
		for _, f := range strings.Fields(l)[1:] {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				if f != "total" {
					t.Fatalf("field %q of %q is not key=value", f, l)
				}
				m["total"] = "1"
				continue
			}
			m[k] = v
		}
		for _, k := range []string{"t", "bytes", "gibps", "send_per_2mib", "recv_per_2mib", "send_eagain_per_2mib", "recv_eagain_per_2mib", "total_bytes"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("line %q lacks %s", l, k)
			}
		}
		if m["total"] == "1" {
			for _, k := range []string{"conns", "wakeups_per_2mib", "cpu_s", "cores"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("total line %q lacks %s", l, k)
				}
			}
		}
		lines = append(lines, m)
	}
	return lines
}

func (m statsLine) uint(t *testing.T, k string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(m[k], 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", k, m[k], err)
	}
	return v
}

// TestServeStatsNbdcopy: nbdcopy copies a 64 MiB null export to null:
// through serve --stats; the lines parse, the total lines' bytes add up to
// the bytes copied, so do the connections' closing totals, and the summary
// (table and JSON) says the same.
func TestServeStatsNbdcopy(t *testing.T) {
	need(t, "nbdcopy")
	jsonFile := filepath.Join(t.TempDir(), "stats.json")
	s := startServe(t, "--backend", "null", "--stats=200ms", "--stats-json", jsonFile)
	mustRun(t, "", "nbdcopy", s.uri, "null:")
	s.stop(t, false)
	lines := parseStats(t, s.out.String())
	var sum, closed uint64
	var last statsLine
	for _, m := range lines {
		if m["total"] == "1" {
			sum += m.uint(t, "bytes")
			last = m
		} else if m["state"] == "closed" {
			closed += m.uint(t, "total_bytes")
		}
	}
	if last == nil || sum != exportSize || last.uint(t, "total_bytes") != exportSize || closed != exportSize {
		t.Fatalf("total lines add up to %d bytes, last total_bytes %v, closed connections %d; want the %d copied:\n%s",
			sum, last["total_bytes"], closed, exportSize, s.out.String())
	}
	if !strings.Contains(s.out.String(), "nbdscope serve: summary over") {
		t.Errorf("no summary table at exit:\n%s", s.out.String())
	}
	var js struct {
		Connections []struct {
			ReadBytes uint64 `json:"read_bytes"`
		} `json:"connections"`
		Total struct {
			ReadBytes uint64 `json:"read_bytes"`
			Server    struct {
				SendCalls uint64   `json:"send_calls"`
				UserS     *float64 `json:"user_s"`
			} `json:"server"`
		} `json:"total"`
	}
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatalf("--stats-json: %v\n%s", err, b)
	}
	var per uint64
	for _, c := range js.Connections {
		per += c.ReadBytes
	}
	if js.Total.ReadBytes != exportSize || per != exportSize || js.Total.Server.SendCalls == 0 || js.Total.Server.UserS == nil {
		t.Errorf("--stats-json: total %d, connections %d, send calls %d, user %v; want %d read:\n%s",
			js.Total.ReadBytes, per, js.Total.Server.SendCalls, js.Total.Server.UserS, exportSize, b)
	}
}
