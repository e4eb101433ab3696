package nbd

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// makeHuge allocates n bytes (n ≥ 2 MiB) advised for huge pages.
//
// A huge page backs only an aligned 2 MiB of memory, and a 2 MiB buffer
// from the heap is rarely aligned, so it would hold none: the buffer is
// cut from a larger allocation at a 2 MiB boundary. The spare (less than
// 2 MiB) is not written by us, so it costs address space, hardly memory.
func makeHuge(n int) []byte {
	raw := make([]byte, n+hugeAdviceMin)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw))) & (hugeAdviceMin - 1))
	b := raw[off : off+n : off+n]
	adviseHuge(b)
	return b
}

// adviseHuge marks the page-aligned part of b MADV_HUGEPAGE. The advice
// is best effort: a kernel without transparent huge pages, or with them
// set to "never", refuses or ignores it, and the buffer then works with
// ordinary pages as before.
func adviseHuge(b []byte) {
	if inner := pageAligned(b); len(inner) > 0 {
		_ = unix.Madvise(inner, unix.MADV_HUGEPAGE)
	}
}

// pageAligned is the part of b made of whole 4 KiB pages, which madvise
// takes; empty where b holds none.
func pageAligned(b []byte) []byte {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + smallPage - 1) &^ (smallPage - 1)
	hi := (start + uintptr(len(b))) &^ (smallPage - 1)
	if hi <= lo {
		return nil
	}
	return b[lo-start : hi-start]
}

// refuseHuge marks the page-aligned part of b MADV_NOHUGEPAGE and drops
// its pages (MADV_DONTNEED): the advice alone would leave a huge page that
// an earlier object in the same heap memory was given, and the next touch
// then maps 4 KiB pages. b is a fresh allocation, all zeroes, which is
// what dropped anonymous pages read as. Best effort, as adviseHuge.
func refuseHuge(b []byte) {
	inner := pageAligned(b)
	if len(inner) == 0 {
		return
	}
	_ = unix.Madvise(inner, unix.MADV_NOHUGEPAGE)
	_ = unix.Madvise(inner, unix.MADV_DONTNEED)
}
