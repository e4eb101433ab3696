package child

import (
	"runtime/debug"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBufferIsZeroTouchesQemusTwoLines: on a sector whose first byte is
// not zero, the zero check still loads the line qemu 7.2's AVX2 check
// prefetches ((buf+160) rounded down to 32 bytes), as qemu-img's does,
// where a check that stops at the first byte touches one line. The
// sector's first 32 bytes end a readable page and the rest lies in a page
// with no access, so the second line's load faults (made a panic here).
func TestBufferIsZeroTouchesQemusTwoLines(t *testing.T) {
	pg := unix.Getpagesize()
	m, err := unix.Mmap(-1, 0, 2*pg, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	if err := unix.Mprotect(m[pg:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	sector := m[pg-32 : pg-32+SectorSize]
	for i := range 32 {
		sector[i] = 0xff
	}
	touched := func() (faulted bool) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { faulted = recover() != nil }()
		BufferIsZero(sector)
		return false
	}()
	if !touched {
		t.Fatal("the check of a 0xff sector loaded only its first line; qemu's loads the first and prefetches the one at +160")
	}
}
