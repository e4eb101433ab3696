//go:build !linux

package nbd

// mapPayload maps a buffer of n bytes and returns it and the mapping to
// unmap (macOS takes no huge-page advice: see makeHuge).
func mapPayload(n int) (data, mapping []byte, err error) {
	m, err := mapAnon(n)
	return m, m, err
}
