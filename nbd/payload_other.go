//go:build !linux

package nbd

// adviseHuge does nothing where the kernel has no madvise huge-page advice
// (macOS pages its VM objects its own way).
func adviseHuge([]byte) {}
