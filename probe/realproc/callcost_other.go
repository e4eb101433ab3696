//go:build !linux

package realproc

import "errors"

// MeasureCallCost: a real process's calls are counted on Linux only.
func MeasureCallCost() (CallCost, error) {
	return CallCost{}, errors.New("socket calls are counted on Linux only")
}
