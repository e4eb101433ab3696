package platform

import (
	"errors"
	"runtime"
)

// ErrPinUnsupported is returned by PinProcess where PinSupported is false.
var ErrPinUnsupported = errors.New("holding a process to chosen CPUs is not supported on " + runtime.GOOS)
