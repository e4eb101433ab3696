package nbd

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// thpAvailable skips the test where the kernel has no transparent huge
// pages to give.
func thpAvailable(t *testing.T) {
	t.Helper()
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages unavailable here (%q, %v): MakePayload's advice has nothing to ask for", strings.TrimSpace(string(mode)), err)
	}
}

// vmFlags returns the VmFlags of the mapping of /proc/self/smaps that
// holds addr.
func vmFlags(t *testing.T, addr uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return line
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return ""
}

// TestMakePayloadAsksForHugePages: the kernel has the buffer's memory
// marked for huge pages ("hg" in its mapping's VmFlags), at any size from
// one huge page up, and a small buffer is left alone.
func TestMakePayloadAsksForHugePages(t *testing.T) {
	thpAvailable(t)
	for _, n := range []int{2 << 20, 32 << 20} {
		b := MakePayload(n)
		if start := uintptr(unsafe.Pointer(&b[0])); start%hugeAdviceMin != 0 || len(b) != n || cap(b) != n {
			t.Errorf("MakePayload(%d): start %#x, len %d, cap %d: want a 2 MiB-aligned buffer of exactly n, which a huge page can back", n, start, len(b), cap(b))
		}
		mid := uintptr(unsafe.Pointer(&b[n/2]))
		if fl := vmFlags(t, mid); !strings.Contains(fl, " hg") {
			t.Errorf("MakePayload(%d): mapping not advised for huge pages: %s", n, fl)
		}
		runtime.KeepAlive(b)
	}
}

// threadFaults is the calling thread's minor page faults so far.
func threadFaults(t *testing.T) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt
}

// firstTouchFaults maps n fresh bytes, gives them advice, and returns the
// page faults on this thread of touching each 4 KiB page once.
func firstTouchFaults(t *testing.T, n int, advice int) int64 {
	t.Helper()
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	if err := unix.Madvise(b, advice); err != nil {
		t.Fatalf("madvise: %v", err)
	}
	before := threadFaults(t)
	Prefault(b)
	return threadFaults(t) - before
}

// TestHugePageAdviceCutsFaults: what the advice buys, on fresh memory: a
// first touch faults per huge page, not per 4 KiB page (issue 11: 262144
// faults per GiB in flight held deep queues at 0.1 GiB/s on a VM). The
// control refuses huge pages, so the test means the same whether the
// machine's THP mode is "madvise" or "always". Counts, not times.
func TestHugePageAdviceCutsFaults(t *testing.T) {
	thpAvailable(t)
	if raceEnabled {
		t.Skip("the race detector faults in its shadow of every page in 4 KiB pages; .ci/run runs this without -race")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const size = 64 << 20
	small := firstTouchFaults(t, size, unix.MADV_NOHUGEPAGE)
	huge := firstTouchFaults(t, size, unix.MADV_HUGEPAGE)
	t.Logf("first touch of 64 MiB: %d faults with 4 KiB pages, %d advised for huge pages", small, huge)
	if small < size/4096/2 {
		t.Fatalf("control took %d faults for %d pages: the count does not see them", small, size/4096)
	}
	// Huge pages can run short (fragmented memory); most must come.
	if huge*4 > small {
		t.Errorf("advised memory took %d faults against %d with small pages: no huge pages", huge, small)
	}
}

// TestSmallPagePayloadRefusesHugePages: the buffer qemu-img's stand-in
// reads into is on 4 KiB pages, as qemu-img's own are, even where huge
// pages are to be had: its mapping refuses them ("nh" in VmFlags) and its
// first touch faults once per 4 KiB page, where MakePayload's takes one
// fault per huge page. Counts, not times.
func TestSmallPagePayloadRefusesHugePages(t *testing.T) {
	thpAvailable(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const n = 8 << 20
	for _, fill := range []bool{false, true} {
		if fill {
			// Heap memory an earlier buffer held with huge pages, freed
			// and given out again: the advice alone would keep them.
			b := MakePayload(n)
			Prefault(b)
			b = nil
			runtime.GC()
		}
		b := MakeSmallPagePayload(n)
		if fl := vmFlags(t, uintptr(unsafe.Pointer(&b[n/2]))); !strings.Contains(fl, " nh") {
			t.Errorf("reused heap %v: mapping does not refuse huge pages: %s", fill, fl)
		}
		if raceEnabled {
			continue // the race detector's shadow faults its own way
		}
		before := threadFaults(t)
		Prefault(b)
		if got := threadFaults(t) - before; got < n/4096*9/10 {
			t.Errorf("reused heap %v: first touch of %d bytes took %d faults, want about %d (one per 4 KiB page): huge pages back it", fill, n, got, n/4096)
		}
		runtime.KeepAlive(b)
	}
}
