package child

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"nbdscope/engine/wire"
	"nbdscope/model"
)

// mappingFlags returns the VmFlags of the mapping of /proc/self/smaps that
// holds b's middle byte.
func mappingFlags(t *testing.T, b []byte) string {
	t.Helper()
	addr := uintptr(unsafe.Pointer(&b[len(b)/2]))
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
		} else if in && strings.HasPrefix(line, "VmFlags:") {
			return line
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return ""
}

// TestScanReadsIntoSmallPages: in the scan consume mode, qemu-img
// convert's, a slot reads into a buffer on 4 KiB pages as convert's are
// ("nh": huge pages refused); in the hash mode into one advised for huge
// pages ("hg"); and a live change of mode gives the slot a buffer of the
// new kind at its next request. With huge-page buffers our load copied
// out of the socket faster than qemu-img and trailed our server, reply
// after reply, where qemu-img found them queued.
func TestScanReadsIntoSmallPages(t *testing.T) {
	if mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages unavailable here (%q, %v)", strings.TrimSpace(string(mode)), err)
	}
	r := &loadRole{size: 64 << 20}
	r.reqSize.Store(2 << 20)
	r.workload.Store(workloadIndex(model.WorkRead))
	r.initConsume(model.ConsumeHash, 1)
	s := r.newSlot(&loadConn{stop: make(chan struct{})}, 0)
	for i, want := range []struct {
		mode  model.ConsumeMode
		flag  string
		small bool
	}{{model.ConsumeHash, " hg", false}, {model.ConsumeScan, " nh", true}, {model.ConsumeHash, " hg", false}} {
		r.setConsumeMode(wire.Cmd{Str: string(want.mode)})
		if i > 0 && s.prepare(false) {
			t.Fatalf("%s after a change of mode: prepared without a new buffer", want.mode)
		}
		if !s.prepare(true) {
			t.Fatalf("%s: prepare failed", want.mode)
		}
		if fl := mappingFlags(t, s.buf); !strings.Contains(fl, want.flag) || s.smallPages != want.small {
			t.Errorf("%s: buffer's mapping %s, small pages %v: want %q", want.mode, fl, s.smallPages, want.flag)
		}
		if !s.prepare(false) {
			t.Errorf("%s: the next request wanted another buffer", want.mode)
		}
	}
}
