// Package leakcheck is goleak with a patient wait, for the test packages
// that check no goroutine outlives what they stopped.
//
// goleak's own retries give up after about 0.4 s, which a busy machine
// running the race detector and every package's tests at once can spend
// before a stopped pair's or program's last goroutine has returned. A
// leak is a goroutine that never ends: waiting longer only costs a
// failing run.
package leakcheck

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Wait is how long a check waits for leftover goroutines to end.
const Wait = 10 * time.Second

// Find polls goleak.Find every 20 ms until it finds nothing or Wait has
// passed, and returns its last error.
func Find(opts ...goleak.Option) error {
	deadline := time.Now().Add(Wait)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// VerifyNone is goleak.VerifyNone with the patient wait of Find: it fails
// t, with goleak's report, only if goroutines are still left after Wait.
// Deferred, its options are evaluated at the defer (goleak.IgnoreCurrent
// then takes the goroutines running before the test).
func VerifyNone(t testing.TB, opts ...goleak.Option) {
	t.Helper()
	if Find(opts...) == nil {
		return
	}
	goleak.VerifyNone(t, opts...)
}
