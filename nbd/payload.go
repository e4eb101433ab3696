package nbd

import "unsafe"

// hugeAdviceMin is the smallest buffer worth asking transparent huge pages
// for: one huge page on x86-64 and arm64.
const hugeAdviceMin = 2 << 20

// MakePayload allocates a payload buffer of n bytes, asking the kernel to
// back it with transparent huge pages where it can (Linux, n ≥ 2 MiB).
//
// Why: a fresh buffer faults in page by page on its first use, and that
// first use is a recv(2) copying into it, so the faults are charged to the
// data path being measured. With 1 GiB in flight (32 MiB × 8 × 4
// connections) that is 262144 faults per side; on a virtual machine, where
// a fault costs tens of microseconds, they held reads at 0.1–0.2 GiB/s for
// the first seconds of a run and stalled the whole process (issue 11). A
// huge page is one fault per 2 MiB: 512 per GiB.
//
// The memory is ordinary Go heap memory, freed by the collector like any
// other; the advice only changes how the kernel backs it.
//
// A huge page backs only an aligned 2 MiB of memory, and a 2 MiB buffer
// from the heap is rarely aligned, so it would hold none: the buffer is
// cut from a larger allocation at a 2 MiB boundary. The spare (less than
// 2 MiB) is not written by us, so it costs address space, hardly memory.
func MakePayload(n int) []byte {
	if n < hugeAdviceMin || !hugeAdviceSupported {
		return make([]byte, n)
	}
	raw := make([]byte, n+hugeAdviceMin)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw))) & (hugeAdviceMin - 1))
	b := raw[off : off+n : off+n]
	adviseHuge(b)
	return b
}

// Prefault touches every 4 KiB page of b, so that the kernel backs it now
// rather than at its first use (a huge page takes one fault, the others
// are then present).
func Prefault(b []byte) {
	for i := 0; i < len(b); i += 4096 {
		b[i] = 0
	}
}
