//go:build !linux

package nbd

// makeHuge is a plain allocation where the kernel takes no huge-page
// advice (macOS pages its VM objects its own way), so there is no
// alignment worth paying address space for.
func makeHuge(n int) []byte { return make([]byte, n) }

// refuseHuge does nothing where there is no huge-page advice to refuse.
func refuseHuge([]byte) {}
