package interop

// Issue 25's "Done when": hyperfine's exports of a real client's sweep,
// and qemu-nbd's flags on serve, run as a user would.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nbdscope/model"
)

// TestSweepExecHyperfineExport: `sweep --exec 'qemu-img …' --sndbuf
// default,2m --repeat 3 --export-hyperfine h.json --export-markdown s.md
// --json` writes both files and stdout; h.json holds 2 results of 3
// times each, in hyperfine's layout.
func TestSweepExecHyperfineExport(t *testing.T) {
	need(t, "qemu-img")
	dir := t.TempDir()
	h, md := filepath.Join(dir, "h.json"), filepath.Join(dir, "s.md")
	client := `qemu-img convert -n -f raw -O raw {uri} 'json:{"file":{"driver":"null-co","size":{size}}}'`
	r := runEnv(t, []string{"NBDSCOPE_HOME=" + t.TempDir()}, nbdscopeBin, "sweep", "--exec", client, "--sndbuf", "default,2m",
		"--repeat", "3", "--bytes", "256m", "--export-hyperfine", h, "--export-markdown", md, "--json")
	if r.code != 0 {
		t.Fatalf("want exit 0:\n%s", r)
	}
	var rep model.SweepReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Rows) != 2 {
		t.Fatalf("stdout is not the sweep's JSON (%v):\n%s", err, r)
	}
	for _, row := range rep.Rows {
		if row.TimeS == nil || row.TimeS.N != 3 || len(row.Measurements) != 3 {
			t.Errorf("%s: time_s %+v, %d measurements; want 3", row.Buffer, row.TimeS, len(row.Measurements))
		}
	}
	var hf struct {
		Results []struct {
			Command    string            `json:"command"`
			Mean       float64           `json:"mean"`
			Stddev     *float64          `json:"stddev"`
			Times      []float64         `json:"times"`
			ExitCodes  []int             `json:"exit_codes"`
			Parameters map[string]string `json:"parameters"`
		} `json:"results"`
	}
	data, err := os.ReadFile(h)
	if err != nil || json.Unmarshal(data, &hf) != nil || len(hf.Results) != 2 {
		t.Fatalf("h.json: %v\n%s", err, data)
	}
	for i, res := range hf.Results {
		if len(res.Times) != 3 || len(res.ExitCodes) != 3 || res.Stddev == nil || res.Command != client+" (sndbuf="+rep.Rows[i].Buffer+")" || res.Parameters["sndbuf_effective_bytes"] == "" {
			t.Errorf("result %d: %+v", i, res)
		}
		for j, x := range res.Times {
			if x != rep.Rows[i].Measurements[j].Seconds {
				t.Errorf("result %d time %d: %v, the sweep measured %v", i, j, x, rep.Rows[i].Measurements[j].Seconds)
			}
		}
	}
	if m, _ := os.ReadFile(md); !strings.Contains(string(m), "| buffer size | time |") || !strings.Contains(string(m), "optimal: ") {
		t.Errorf("s.md:\n%s", m)
	}
}

// TestServeQemuNBDFlags: `serve -p PORT -b 127.0.0.1 -t -f raw --backend
// null` serves on that address (port 0 here: the port the server says).
func TestServeQemuNBDFlags(t *testing.T) {
	need(t, "nbdinfo")
	p := startProc(t, procSpec{name: nbdscopeBin, args: []string{"serve", "-p", "0", "-b", "127.0.0.1", "-t", "-f", "raw", "--backend", "null"},
		network: "tcp", address: "127.0.0.1:0", ours: true})
	r := mustRun(t, "", "nbdinfo", "--size", "nbd://"+p.spec.address)
	if strings.TrimSpace(r.out) != "1073741824" {
		t.Errorf("nbdinfo --size: %s", r)
	}
}
