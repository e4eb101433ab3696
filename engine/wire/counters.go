package wire

import (
	"golang.org/x/sys/unix"

	"nbdscope/clientrun"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/probe/schedstat"
)

// The counters a child reports in its poll replies (Msg.Counters):
// its own, or a real client's. The controller reads its own the same way
// (the machine meter's share of nbdscope), and so does serve --stats.

// SelfCounters are this process's counters: the data-socket I/O counts
// io, with its CPU seconds and context switches from getrusage.
func SelfCounters(io nbd.IOStats) model.Counters {
	c := model.Counters{IO: io}
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return c
	}
	c.UserS, c.SysS = tv(ru.Utime), tv(ru.Stime)
	c.VolCS, c.InvolCS, c.MinFlt = uint64(ru.Nvcsw), uint64(ru.Nivcsw), uint64(ru.Minflt)
	return c
}

// CPU is a process's user and system seconds.
type CPU struct {
	UserS float64 `json:"user_s"`
	SysS  float64 `json:"sys_s"`
}

// Sub is the CPU spent between o and c.
func (c CPU) Sub(o CPU) CPU { return CPU{UserS: c.UserS - o.UserS, SysS: c.SysS - o.SysS} }

// Add is the sum of c and o.
func (c CPU) Add(o CPU) CPU { return CPU{UserS: c.UserS + o.UserS, SysS: c.SysS + o.SysS} }

// SelfCPU is this process's CPU seconds so far (getrusage), zero where
// it cannot be read.
func SelfCPU() CPU {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return CPU{}
	}
	return CPU{UserS: tv(ru.Utime), SysS: tv(ru.Stime)}
}

func tv(t unix.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// ClientCounters are a real client's measured figures as the counters a
// process reports: its CPU, switches and faults (its socket calls are its
// own, not counted). A live exec side and a sweep's run alike.
func ClientCounters(r clientrun.Result) model.Counters {
	return model.Counters{UserS: r.UserS, SysS: r.SysS, VolCS: uint64(r.Nvcsw), InvolCS: uint64(r.Nivcsw), MinFlt: uint64(r.MinFlt)}
}

// ReadSched reads where the processes pids' time went into c.Sched,
// through sc (cumulative across reads, as c's CPU is); c.Sched stays
// zero, not measured, where schedstat cannot be read.
func ReadSched(sc *schedstat.Counter, c *model.Counters, pids ...int) {
	t, span, err := sc.Read(pids...)
	if err != nil {
		return
	}
	c.Sched = model.Sched{RunS: t.Run.Seconds(), WaitS: t.Wait.Seconds(), SleepS: t.Sleep.Seconds(), SpanS: span.Seconds(),
		LeadRunS: t.LeadRun.Seconds(), LeadWaitS: t.LeadWait.Seconds()}
}
