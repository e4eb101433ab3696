package engine

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// leakWait is how long a check for leaked goroutines waits for them to
// end. goleak's own retries give up after about 0.4 s, which a busy
// machine running the race detector and every package at once can spend
// before a stopped pair's last goroutine has run its return. A leak is a
// goroutine that never ends: waiting longer only costs a failing run.
const leakWait = 10 * time.Second

// findLeaks polls goleak.Find every 20 ms until it finds nothing or d has
// passed, and returns its last error.
func findLeaks(d time.Duration, opts ...goleak.Option) error {
	deadline := time.Now().Add(d)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// verifyNoLeaks is goleak.VerifyNone with a patient wait: it fails t,
// with goleak's report, only if goroutines are left after leakWait.
// Deferred, its options are evaluated at the defer (goleak.IgnoreCurrent
// then takes the goroutines running before the test).
func verifyNoLeaks(t *testing.T, opts ...goleak.Option) {
	t.Helper()
	if findLeaks(leakWait, opts...) == nil {
		return
	}
	goleak.VerifyNone(t, opts...)
}
