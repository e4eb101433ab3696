//go:build !linux

package sockdiag

import "time"

// sleepFor sleeps d; off Linux the runtime's timer does it.
func sleepFor(d time.Duration) { time.Sleep(d) }
