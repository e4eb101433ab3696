package clientrun

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"nbdscope/platform"
)

// TestRunHoldsTreeToCPUs: with cpus, the client and the process it starts
// begin held to them (inherited from the forking thread), while this
// process keeps every CPU it had.
func TestRunHoldsTreeToCPUs(t *testing.T) {
	allowed := platform.AllowedCPUs()
	if len(allowed) < 2 {
		t.Skipf("needs 2 CPUs to tell a held process from a free one; this process may use %v", allowed)
	}
	cpu := allowed[len(allowed)-1]
	out := filepath.Join(t.TempDir(), "cpus")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The grandchild reports its own mask.
	script := `sh -c 'grep Cpus_allowed_list /proc/self/status' > ` + out
	if _, err := Run(ctx, []string{"/bin/sh", "-c", script}, []int{cpu}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "Cpus_allowed_list:")); got != strconv.Itoa(cpu) {
		t.Errorf("the client's child ran on cpus %q, want %d", got, cpu)
	}
	if after := platform.AllowedCPUs(); len(after) != len(allowed) {
		t.Errorf("this process's CPUs went from %v to %v", allowed, after)
	}
}
