package model

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Latency histogram: log-linear buckets over microseconds, 8 per power of
// two, so any percentile is within ±6% of the true value. Buckets are
// cumulative counters, so percentiles of an interval come from the
// difference of two snapshots.
const (
	histSub     = 8 // buckets per power of two
	histBuckets = 40 * histSub
)

// Histogram is safe for concurrent Add.
type Histogram struct {
	b [histBuckets]atomic.Uint64
}

func histIndex(us uint64) int {
	if us < histSub {
		return int(us)
	}
	e := bits.Len64(us) - 1 // us in [2^e, 2^(e+1))
	sub := (us >> (uint(e) - 3)) & (histSub - 1)
	i := (e-2)*histSub + int(sub)
	if i >= histBuckets {
		i = histBuckets - 1
	}
	return i
}

// histValue is the middle of bucket i, in microseconds.
func histValue(i int) float64 {
	if i < histSub {
		return float64(i)
	}
	e := i/histSub + 2
	sub := i % histSub
	lo := float64(uint64(1)<<uint(e)) * (1 + float64(sub)/histSub)
	width := float64(uint64(1)<<uint(e)) / histSub
	return lo + width/2
}

// Add records one latency.
func (h *Histogram) Add(d time.Duration) {
	us := uint64(d / time.Microsecond)
	h.b[histIndex(us)].Add(1)
}

// Snapshot copies the counters.
func (h *Histogram) Snapshot() []uint64 {
	out := make([]uint64, histBuckets)
	for i := range out {
		out[i] = h.b[i].Load()
	}
	return out
}

// histSub returns a - b bucket-wise (b may be nil or shorter).
func HistDiff(a, b []uint64) []uint64 {
	out := make([]uint64, len(a))
	for i := range a {
		out[i] = a[i]
		if i < len(b) {
			out[i] -= b[i]
		}
	}
	return out
}

// Percentile returns the p-th percentile (0 < p ≤ 100) in milliseconds of a
// bucket snapshot, or Unknown when it holds nothing.
func Percentile(h []uint64, p float64) Figure {
	var total uint64
	for _, c := range h {
		total += c
	}
	if total == 0 {
		return Unknown
	}
	rank := uint64(float64(total)*p/100 + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h {
		seen += c
		if seen >= rank {
			return Figure(histValue(i) / 1000)
		}
	}
	return Figure(histValue(len(h)-1) / 1000)
}
