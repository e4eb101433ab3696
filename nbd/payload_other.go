//go:build !linux

package nbd

// hugeAdviceSupported: no huge pages to ask for, so no alignment to pay
// address space for.
const hugeAdviceSupported = false

// adviseHuge does nothing where the kernel has no madvise huge-page advice
// (macOS pages its VM objects its own way).
func adviseHuge([]byte) {}
