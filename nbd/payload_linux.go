package nbd

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeAdviceSupported: Linux has transparent huge pages to ask for.
const hugeAdviceSupported = true

// adviseHuge marks the page-aligned part of b MADV_HUGEPAGE. The advice
// is best effort: a kernel without transparent huge pages, or with them
// set to "never", refuses or ignores it, and the buffer then works with
// ordinary pages as before.
func adviseHuge(b []byte) {
	const page = 4096
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + page - 1) &^ (page - 1)
	hi := (start + uintptr(len(b))) &^ (page - 1)
	if hi <= lo {
		return
	}
	_ = unix.Madvise(b[lo-start:hi-start], unix.MADV_HUGEPAGE)
}
