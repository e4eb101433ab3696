package nbd

// RequestForEffective returns the SO_SNDBUF/SO_RCVBUF request that yields
// the given effective size. Linux doubles every request (the extra half is
// its bookkeeping allowance, see socket(7)), so asking for half gives back
// the value getsockopt reported.
func RequestForEffective(effective int) int { return effective / 2 }
