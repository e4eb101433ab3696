//go:build !linux

package nbd

// RequestForEffective returns the SO_SNDBUF/SO_RCVBUF request that yields
// the given effective size. Outside Linux the kernel stores the request as
// given.
func RequestForEffective(effective int) int { return effective }
