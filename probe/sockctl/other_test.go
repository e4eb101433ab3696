//go:build !linux

package sockctl

import (
	"errors"
	"strings"
	"testing"
)

func TestUnsupportedOffLinux(t *testing.T) {
	_, err := Open(1)
	var e *Error
	if !errors.As(err, &e) || e.Reason != ReasonUnsupported || !strings.Contains(e.Why, "no way to change another process's buffer") {
		t.Errorf("Open: %v, want ReasonUnsupported", err)
	}
}
