package meter

import (
	"time"

	"nbdscope/model"
	"nbdscope/nbd"
)

// CPU is a process's user and system seconds.
type CPU struct {
	UserS, SysS float64
}

// Load is one reading of a side's load process (or an exec side's
// client): cumulative counters, its active clock, and the buffers of its
// data sockets.
type Load struct {
	Counters model.Counters
	// ClockCPU is the CPU spent while the active clock ran, read at the
	// clock's own starts and stops (our load); nil where not known (a
	// real client), and then Counters' CPU is over the whole span.
	ClockCPU *CPU
	Bytes    uint64
	ActiveNs int64
	Warming  bool
	Hist     []uint64
	MaxLatNs int64 // the longest request since the last reading
	Consumed *model.ConsumeCounts
	Errors   uint64
	Conns    int
	Bufs     Bufs
}

// Server is one reading of a side's server child: its counters, the
// payload it moved (a real client's bytes), its data sockets' buffers.
type Server struct {
	Counters model.Counters
	Payload  *nbd.Payload
	Bufs     Bufs
}

// Bufs are a process's data-socket buffers as read back (0: unknown)
// and as the process had set them itself (a real process's own).
type Bufs struct {
	Snd, Rcv, OwnSnd, OwnRcv int
}

// Reading is one poll of a side: its load and server, and when.
type Reading struct {
	At     time.Time
	Load   Load
	Server Server
}
