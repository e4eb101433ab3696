package phrase

import (
	"fmt"
	"strings"

	"nbdscope/model"
)

// ReasonShort is a reason in a few words, for the panel: "no permission".
func ReasonShort(r model.Reason) string {
	switch r.Kind {
	case model.ReasonNoPermission:
		return "no permission"
	case model.ReasonBlocked:
		return "blocked by a security policy"
	case model.ReasonNoKernelSupport:
		return "not in this kernel"
	case model.ReasonNotOnThisOS:
		return "Linux only"
	case model.ReasonNoConnection:
		return "no connection found"
	case model.ReasonNoneRead:
		return "no data socket read"
	case model.ReasonCountingOff:
		return "counting off"
	case model.ReasonGone:
		return "process gone"
	case model.ReasonSharedServer:
		return "one server for both sides"
	case model.ReasonReceiverChanged:
		return "receiver changed"
	case model.ReasonServedByUs:
		return "served by nbdscope"
	case model.ReasonNotLocal:
		return "not a local process"
	case model.ReasonNotRunning:
		return "not running"
	case model.ReasonFailed:
		if r.Detail != "" {
			return firstClause(r.Detail)
		}
		return "could not be read"
	}
	return firstClause(r.Text)
}

// ReasonLong is a reason in a sentence, for reports and warnings: the
// instrument's own account of the facts where it gave one, and over how
// many samples it held.
func ReasonLong(r model.Reason) string {
	s := reasonSentence(r)
	if r.Samples > 0 {
		s = fmt.Sprintf("%s in any of the %s in which the load ran", strings.TrimSuffix(s, "."), CountOf(r.Samples, "sample"))
	}
	return s
}

// ReasonWithFix is the long form and, where there is one, its fix:
// "… (fix: sudo sysctl -w kernel.perf_event_paranoid=2)".
func ReasonWithFix(r model.Reason) string {
	if r.Fix == "" && r.Kind == model.ReasonNotOnThisOS {
		return ReasonLong(r) + " (measured on Linux only)"
	}
	if r.Fix == "" {
		return ReasonLong(r)
	}
	return ReasonLong(r) + " (fix: " + r.Fix + ")"
}

// reasonSentence is the kind's sentence, or the instrument's (Detail).
func reasonSentence(r model.Reason) string {
	what := r.What
	if what == "" {
		what = "it"
	}
	switch r.Kind {
	case model.ReasonText:
		return r.Text
	case model.ReasonNoConnection:
		return "no connection between " + pidList(r.PIDs) + " found"
	case model.ReasonSharedServer:
		return "one --target process serves both sides and both loads ran in the span: its calls cannot be split between them"
	case model.ReasonReceiverChanged:
		if len(r.Receivers) > 1 {
			return "the receiver changed: see the segments (" + strings.Join(r.Receivers, " → ") + ")"
		}
		return "the receiver changed: see the segments"
	case model.ReasonServedByUs:
		return "it is served by nbdscope itself"
	case model.ReasonNotRunning:
		if r.What != "" {
			return r.What + " did not start"
		}
		return "the side is not running"
	case model.ReasonNoneRead:
		if r.What != "" {
			return "no sample of the data sockets " + r.What + " (a run shorter than the sampler's 5 ms?)"
		}
	}
	if r.Detail != "" {
		return r.Detail
	}
	switch r.Kind {
	case model.ReasonNoPermission:
		return "not permitted to read " + what
	case model.ReasonBlocked:
		return "refused to read " + what + " by a seccomp filter or a security module"
	case model.ReasonNoKernelSupport:
		return "this kernel cannot read " + what
	case model.ReasonNotOnThisOS:
		return what + " is measured on Linux only"
	case model.ReasonNoneRead:
		return "the sampler read none of the data sockets"
	case model.ReasonCountingOff:
		return "counting is turned off (NBDSCOPE_SYSCOUNT=off)"
	case model.ReasonGone:
		return "the process has exited"
	case model.ReasonNotLocal:
		if r.What != "" {
			return "the server is external (" + r.What + "): its process is not known here"
		}
		return "its server is not a local process nbdscope may look at"
	case model.ReasonFailed:
		return "reading " + what + " failed"
	}
	return string(r.Kind)
}

// pidList is "PID 1 and PID 2"; "the processes" for none.
func pidList(pids []int) string {
	if len(pids) == 0 {
		return "the processes"
	}
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = fmt.Sprintf("PID %d", p)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// firstClause is a saved sentence up to its first colon, for the panel.
func firstClause(s string) string {
	if c, _, ok := strings.Cut(s, ": "); ok {
		return c
	}
	return s
}
