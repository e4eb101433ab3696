package nbd

import "unsafe"

// mapPayload maps a buffer of n bytes and returns it and the mapping to
// unmap. A buffer of a huge page or more is cut from a mapping a huge
// page larger at a 2 MiB boundary and advised for huge pages, as
// MakePayload does on the heap (issue 11: one fault per 2 MiB instead of
// 512); the spare is never written, so it costs address space only.
func mapPayload(n int) (data, mapping []byte, err error) {
	if n < hugeAdviceMin {
		m, err := mapAnon(n)
		return m, m, err
	}
	m, err := mapAnon(n + hugeAdviceMin)
	if err != nil {
		return nil, nil, err
	}
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(m))) & (hugeAdviceMin - 1))
	data = m[off : off+n : off+n]
	adviseHuge(data)
	return data, m, nil
}
