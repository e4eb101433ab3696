package nbd

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// threadFaults is the calling thread's minor page faults so far.
func threadFaults(t *testing.T) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt
}

// touchFaults writes one byte per 4 KiB page of b and returns the page
// faults that took on this thread.
func touchFaults(t *testing.T, b []byte) int64 {
	before := threadFaults(t)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	return threadFaults(t) - before
}

// TestMakePayloadFaultsInHugePages: a payload buffer's first use takes a
// fault per huge page, not per 4 KiB page (issue 11: 262144 faults per GiB
// in flight held deep queues at 0.1 GiB/s on a VM). The control is the same
// size with huge pages refused, so the test means the same whether the
// machine's THP mode is "madvise" or "always". Counts, not times.
func TestMakePayloadFaultsInHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages unavailable here (%q, %v): MakePayload's advice has nothing to ask for", strings.TrimSpace(string(mode)), err)
	}
	if raceEnabled {
		t.Skip("the race detector faults in its shadow of every page in 4 KiB pages; .ci/run runs this without -race")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const size = 64 << 20
	control := make([]byte, size)
	if err := unix.Madvise(control[4096:size-4096], unix.MADV_NOHUGEPAGE); err != nil {
		t.Fatalf("madvise: %v", err)
	}
	small := touchFaults(t, control)
	huge := touchFaults(t, MakePayload(size))
	t.Logf("first touch of 64 MiB: %d faults with 4 KiB pages, %d through MakePayload", small, huge)
	if small < size/4096/2 {
		t.Fatalf("control took %d faults for %d pages: the count does not see them", small, size/4096)
	}
	// Huge pages can run short (fragmented memory); most must come.
	if huge*4 > small {
		t.Errorf("MakePayload's buffer took %d faults against %d with small pages: no huge pages", huge, small)
	}
}
