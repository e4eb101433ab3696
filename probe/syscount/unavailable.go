package syscount

// Reason is why system calls cannot be counted.
type Reason int

// The reasons, each with its own fix.
const (
	// ReasonUnsupported: this OS has no per-process syscall tracepoints.
	ReasonUnsupported Reason = iota + 1
	// ReasonNoPerfEvents: the kernel has no perf_event_open
	// (CONFIG_PERF_EVENTS off).
	ReasonNoPerfEvents
	// ReasonTracefsNotMounted: no tracefs, so no tracepoint ids to ask
	// perf_event_open for.
	ReasonTracefsNotMounted
	// ReasonTracefsUnreadable: tracefs is mounted but only root may read
	// it (the default, mode 0700): the tracepoint ids cannot be read.
	ReasonTracefsUnreadable
	// ReasonNoSyscallTracepoints: the kernel was built without
	// CONFIG_FTRACE_SYSCALLS.
	ReasonNoSyscallTracepoints
	// ReasonParanoid: kernel.perf_event_paranoid is too high and the
	// process has neither root nor CAP_PERFMON. Counters that exclude the
	// kernel (which still count syscall tracepoints: they carry the
	// caller's user registers) need paranoid ≤ 2, the usual default;
	// Debian's 3 forbids them. On a kernel where they would count
	// nothing, counters need paranoid ≤ 1. (Measured as uid 65534 on
	// Linux 6.18; -1 is never needed.)
	ReasonParanoid
	// ReasonOtherUser: the target runs as another user; perf allows that
	// only with CAP_PERFMON (root has it), whatever perf_event_paranoid
	// says.
	ReasonOtherUser
	// ReasonBlocked: perf_event_open was refused although the paranoid
	// level and capabilities allow it: a seccomp filter (a container's
	// default profile) or a security module.
	ReasonBlocked
	// ReasonGone: the process has exited.
	ReasonGone
	// ReasonOff: the user turned counting off (realproc's
	// NBDSCOPE_SYSCOUNT=off, to measure what counting costs).
	ReasonOff
)

// String is a short stable name ("perf-event-paranoid") for logs and JSON.
func (r Reason) String() string {
	return nameOf(r, "Reason", []string{
		ReasonUnsupported:          "unsupported",
		ReasonNoPerfEvents:         "no-perf-events",
		ReasonTracefsNotMounted:    "tracefs-not-mounted",
		ReasonTracefsUnreadable:    "tracefs-unreadable",
		ReasonNoSyscallTracepoints: "no-syscall-tracepoints",
		ReasonParanoid:             "perf-event-paranoid",
		ReasonOtherUser:            "other-user",
		ReasonBlocked:              "blocked",
		ReasonGone:                 "gone",
		ReasonOff:                  "off",
	})
}

// Unavailable says why system calls cannot be counted and how to lift it.
type Unavailable struct {
	Reason Reason
	// Why is the reason in a sentence, with the facts read ("kernel.
	// perf_event_paranoid is 2 and …").
	Why string
	// Fix is the one command that lifts it, empty where none does (an
	// OS or a kernel build).
	Fix string
	// Err is the system's own error, when there was one.
	Err error
}

func (u *Unavailable) Error() string {
	s := "system calls cannot be counted: " + u.Why
	if u.Fix != "" {
		s += " (fix: " + u.Fix + ")"
	}
	return s
}

func (u *Unavailable) Unwrap() error { return u.Err }
