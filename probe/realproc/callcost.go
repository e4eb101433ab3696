package realproc

import "time"

// CallCost is what counting a process's socket calls costs each call on
// this machine, as nbdscope counts a real client or server (OpenCalls):
// a tight loop of a 1-byte write and a 1-byte read on a unix socketpair,
// timed in the loop thread's own CPU (on a shared machine wall time
// mostly measures the other tenants), counted and uncounted in turn.
type CallCost struct {
	PerCall time.Duration // CPU added to each socket call (0 when within the noise)
	Ratio   float64       // the counted loop's CPU over the uncounted's
	Calls   int           // calls timed each way
}

// callCostRounds and callCostOps: 5 rounds of 20,000 write-read pairs
// each way, about a fifth of a second in all at 1-2 µs a call.
const (
	callCostRounds = 5
	callCostOps    = 20000
)
