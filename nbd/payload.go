package nbd

// hugeAdviceMin is the smallest buffer worth asking transparent huge pages
// for: one huge page on x86-64 and arm64.
const hugeAdviceMin = 2 << 20

// smallPage is the base page size that faults and madvise work in.
const smallPage = 4096

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
// other; the advice only changes how the kernel backs it. Where there is
// no advice to give, it is a plain allocation (makeHuge).
func MakePayload(n int) []byte {
	if n < hugeAdviceMin {
		return make([]byte, n)
	}
	return makeHuge(n)
}

// MakeSmallPagePayload allocates a payload buffer of n bytes on ordinary
// 4 KiB pages, refusing transparent huge pages where the kernel would give
// them (Linux, n ≥ 2 MiB): the memory qemu-img convert reads into. Its
// buffers come from qemu_blockalign, a page-aligned glibc allocation of
// its own mmap with no advice, and on this kernel (THP "madvise") they
// hold no huge page (AnonHugePages 0 kB in its smaps_rollup, where our
// load's MakePayload buffers held 16384 kB). The backing is not a detail:
// a copy out of the socket into huge pages, with fewer TLB misses, ran a
// few percent faster per byte (perf: 3.4 against 3.5-3.6 µs per 36 KiB
// socket buffer), and against a server that writes at about the same pace
// that decides whether the reader finds a reply queued or trails the
// writer in pieces (docs/real-clients.md, "Figures").
func MakeSmallPagePayload(n int) []byte {
	b := make([]byte, n)
	if n >= hugeAdviceMin {
		refuseHuge(b)
	}
	return b
}

// Prefault touches every 4 KiB page of b, so that the kernel backs it now
// rather than at its first use (a huge page takes one fault, the others
// are then present).
func Prefault(b []byte) {
	for i := 0; i < len(b); i += smallPage {
		b[i] = 0
	}
}
