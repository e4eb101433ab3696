package nbd

import (
	"math/bits"
	"sync"
)

// Payload buffers come from size-class pools (powers of two from 4 KiB to
// 32 MiB), so the steady state of a run allocates nothing per request.
const (
	minPoolShift = 12
	maxPoolShift = 25 // 32 MiB = MaxPayload
)

var bufPools [maxPoolShift + 1]sync.Pool

func poolClass(n int) int {
	if n <= 1<<minPoolShift {
		return minPoolShift
	}
	return bits.Len(uint(n - 1))
}

// getBuf returns a buffer of length n (capacity the size class).
func getBuf(n int) *[]byte {
	cl := poolClass(n)
	if cl > maxPoolShift {
		b := MakePayload(n)
		return &b
	}
	if v := bufPools[cl].Get(); v != nil {
		bp := v.(*[]byte)
		*bp = (*bp)[:n]
		return bp
	}
	b := MakePayload(1 << cl)[:n]
	return &b
}

// putBuf returns a buffer obtained from getBuf.
func putBuf(bp *[]byte) {
	if bp == nil {
		return
	}
	c := cap(*bp)
	cl := poolClass(c)
	if cl > maxPoolShift || c != 1<<cl {
		return
	}
	*bp = (*bp)[:0]
	bufPools[cl].Put(bp)
}
