package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// One run with B switched to writes at 2 s: run --csv and runs export
// --format csv of the saved run are the same CSV; B's rows, and its
// segments in the JSON and in runs show, switch receiver from the client
// to the server at the change (issues 12 and 13).
func TestRunCSVMatchesExportAndFollowsTheStamp(t *testing.T) {
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := func(args ...string) []byte {
		t.Helper()
		c := exec.CommandContext(ctx, nbdscopeBin, args...)
		c.Env = append(os.Environ(), "NBDSCOPE_HOME="+home)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil {
			t.Fatalf("nbdscope %v: %v\n%s\n%s", args, err, out, stderr.String())
		}
		return out
	}
	live := cmd("run", "--duration", "4s", "--interval", "250ms", "--mode", "concurrent", "--request-size", "256k",
		"--at", "2s:b.workload=write", "--csv", "--save", "w")
	exported := cmd("runs", "export", "w", "--format", "csv")
	if !bytes.Equal(live, exported) {
		t.Errorf("run --csv and runs export --format csv differ:\n%s\n---\n%s", live, exported)
	}
	recs, err := csv.NewReader(bytes.NewReader(live)).ReadAll()
	if err != nil || len(recs) < 8 {
		t.Fatalf("csv: %v, %d records", err, len(recs))
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"receiver", "client_recv_eagain_per_2mib", "server_send_eagain_per_2mib", "client_voluntary_cs_per_2mib", "sender_send_calls_per_2mib"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("no column %s in %q", h, recs[0])
		}
	}
	var seen []string
	for _, r := range recs[1:] {
		if r[col["side"]] != "B" || r[col["active"]] != "true" || r[col["settings_changed"]] == "true" {
			continue
		}
		want := map[string]string{"read": "client", "write": "server"}[r[col["workload"]]]
		if r[col["receiver"]] != want || r[col["receiver_recv_calls_per_2mib"]] != r[col[want+"_recv_calls_per_2mib"]] {
			t.Errorf("B row at %s: workload %s, receiver %s", r[col["t"]], r[col["workload"]], r[col["receiver"]])
		}
		if len(seen) == 0 || seen[len(seen)-1] != r[col["receiver"]] {
			seen = append(seen, r[col["receiver"]])
		}
	}
	if strings.Join(seen, ",") != "client,server" {
		t.Errorf("B's receiver over the run: %v, want client then server", seen)
	}

	var file struct {
		Report struct {
			Sides []struct {
				Segments []struct {
					From, To float64
					Settings struct{ Workload string }
					Client   struct {
						RecvCalls uint64 `json:"recv_calls"`
					}
					Server struct {
						RecvCalls uint64 `json:"recv_calls"`
					}
				} `json:"segments"`
			} `json:"sides"`
		} `json:"report"`
	}
	if err := json.Unmarshal(cmd("runs", "export", "w", "--format", "json"), &file); err != nil {
		t.Fatal(err)
	}
	rep := file.Report
	if len(rep.Sides) != 2 || len(rep.Sides[0].Segments) != 1 || len(rep.Sides[1].Segments) != 2 {
		t.Fatalf("segments: %+v", rep.Sides)
	}
	if b := rep.Sides[1].Segments; b[0].Settings.Workload != "read" || b[1].Settings.Workload != "write" || b[1].Server.RecvCalls == 0 {
		t.Errorf("B's segments: %+v", b)
	}
	show := string(cmd("runs", "show", "w"))
	if !strings.Contains(show, "## Segments") || !strings.Contains(show, "(client)") || !strings.Contains(show, "(server)") {
		t.Errorf("runs show has no segments:\n%s", show)
	}
}
