//go:build !linux

package child

import "golang.org/x/sys/unix"

// mapAnon maps n bytes of fresh anonymous memory.
func mapAnon(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
}

// unmap drops a mapping of mapAnon.
func unmap(b []byte) error { return unix.Munmap(b) }
