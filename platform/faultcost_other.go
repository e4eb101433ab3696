//go:build !linux

package platform

import "time"

// faultCost is not measured here: there is no per-thread fault count
// (RUSAGE_THREAD) to divide the time by.
func faultCost() (time.Duration, bool) { return 0, false }
