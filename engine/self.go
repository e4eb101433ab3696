package engine

import (
	"nbdscope/model"
	"nbdscope/nbd"
)

// SelfCounters are this process's counters (getrusage: CPU seconds and
// context switches) with the data-socket counts io: for a server run in
// this process (serve --stats), the same figures a server child reports.
func SelfCounters(io nbd.IOStats) model.Counters { return selfCounters(io) }
