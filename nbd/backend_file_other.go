//go:build !linux

package nbd

// Outside Linux the file backend writes zeroes for TRIM and WRITE_ZEROES and
// reports everything as data.

func (b *File) osTrim(off, length int64) (done bool, err error) { return false, nil }

func (b *File) osZero(off, length int64, mayTrim bool) (done bool, err error) {
	return false, nil
}

func (b *File) osExtents(off, length int64) ([]Extent, bool) { return nil, false }
