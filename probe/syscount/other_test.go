//go:build !linux

package syscount

import (
	"errors"
	"testing"
)

func TestUnsupportedOffLinux(t *testing.T) {
	for _, err := range []error{Probe(), func() error { _, err := Open(1, Options{AllFDs: true}); return err }()} {
		var u *Unavailable
		if !errors.As(err, &u) || u.Reason != ReasonUnsupported || u.Why == "" {
			t.Errorf("got %v, want ReasonUnsupported with a reason", err)
		}
	}
}
