//go:build !linux

package main

import "errors"

// measureFillCost: the fill programs run on Linux only.
func measureFillCost() (*doctorFillCost, error) {
	return nil, errors.New("the fill programs run on Linux only")
}
