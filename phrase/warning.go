package phrase

import (
	"fmt"
	"strconv"
	"strings"

	"nbdscope/model"
	"nbdscope/units"
)

// WarningLong is a warning in full, naming its side: run's stderr, the
// reports, the JSON's text. A warning saved before warnings had
// parameters is its own text.
func WarningLong(w model.Warning) string {
	if w.What == nil {
		return w.Text
	}
	return sideName(w.Side) + warningLong(w.What)
}

// WarningShort is a warning in one line of the side's panel, or the
// status line: its side is where it is shown.
func WarningShort(w model.Warning) string {
	if w.What == nil {
		return strings.TrimPrefix(w.Text, sideName(w.Side))
	}
	return warningShort(w.What)
}

// WarningFix is the command or key that lifts a warning, "" for none.
func WarningFix(w model.Warning) string {
	switch p := w.What.(type) {
	case nil:
		return w.Fix
	case model.Clamped:
		return p.Command + "  (persist: " + p.Persist + " in " + p.Where + ")"
	case model.FewCores:
		return "press m or use --mode alternate"
	case model.TargetShared:
		return "press m or use --mode alternate: each side's server figures are then the process's in that side's turns"
	case model.ExecFlowOther:
		return "--workload-" + strings.ToLower(string(w.Side)) + " " + string(p.Flow) +
			" (w in the explorer) names it as it is; the figures follow what the client did either way"
	case model.ExecIdle:
		return "run it by hand against nbdscope serve -k SOCK to see what it does; it must connect to {uri} (or {socket}) and read or write"
	case model.CallsUnknown:
		return p.Reason.Fix
	case model.FillNotMeasured:
		if p.Reason.Fix == "" && p.Reason.Kind == model.ReasonNotOnThisOS {
			return "measured on Linux only"
		}
		return p.Reason.Fix
	case model.TargetNotMeasured:
		return p.Reason.Fix
	case model.TargetBuffersKept:
		return p.Reason.Fix
	case model.SchedUnknown:
		return schedFix[p.Cause]
	case model.NoOpChange:
		return "change it to another value, or start the run at another one"
	case model.TurnsNotWhole:
		return "move the change at least a turn from the run's start, its end and the other side's changes, or use --mode concurrent"
	case model.PayloadAssumed:
		if p.Export <= 0 {
			return "check that the server serves an export the client can open"
		}
	}
	return ""
}

// schedWhy and schedFix word a SchedUnknown's cause.
var (
	schedWhy = map[string]string{
		"os":     "%s keeps no per-thread run-queue delay that can be read",
		"kernel": "this kernel has no /proc/PID/schedstat (built without CONFIG_SCHED_INFO)",
		"off":    "schedstat reads 0 for a running thread: sched_info is off",
		"proc":   "/proc could not be read: %s",
	}
	schedFix = map[string]string{
		"os":     "measure on Linux",
		"kernel": "a kernel with CONFIG_SCHEDSTATS or CONFIG_TASK_DELAY_ACCT, which select it",
		"off":    "boot with delayacct or set kernel.sched_schedstats=1",
		"proc":   "check that /proc is mounted",
	}
)

// schedWhyOf is a SchedUnknown's cause in words.
func schedWhyOf(p model.SchedUnknown) string {
	switch p.Cause {
	case "os":
		return fmt.Sprintf(schedWhy["os"], p.OS)
	case "proc":
		return fmt.Sprintf(schedWhy["proc"], p.Err)
	case "kernel", "off":
		return schedWhy[p.Cause]
	}
	return "schedstat cannot be read"
}

// warningLong is each kind's sentence.
func warningLong(what model.WarningParams) string {
	switch p := what.(type) {
	case model.Clamped:
		return fmt.Sprintf("%s: requested %s should give %s effective, the kernel gave %s: clamped by %s",
			p.Setting, size(p.Requested), size(p.Expected), size(p.Got), p.Limit)
	case model.FewCores:
		return fmt.Sprintf("this machine has %s: in concurrent mode the sides compete for CPU; alternate mode is fairer", CountOf(p.Cores, "core"))
	case model.TurnFailed:
		return fmt.Sprintf("could not %s its load: %s", pauseVerb(p.Pause), p.Err)
	case model.ScriptFailed:
		return fmt.Sprintf("scripted change %s failed: %s", p.Change, p.Err)
	case model.PlacementFailed:
		return fmt.Sprintf("placement %s failed (%s); the scheduler places what could not be held", p.Placement, strings.Join(p.Failures, "; "))
	case model.ConsumeNotChanged:
		return fmt.Sprintf("%s not changed to %d: %s", settingWords(p.Setting), p.Value, p.Err)
	case model.CallsUnknown:
		return "the client's socket calls are n/a: " + ReasonLong(p.Reason)
	case model.RequestsFailed:
		return fmt.Sprintf("%s failed in the last %.2f s (the figures count only those that did not): %s",
			CountOf(p.Count, "request"), p.Seconds, orNoReason(p.LastErr))
	case model.FillNotMeasured:
		return "send-buffer fill n/a: " + ReasonLong(p.Reason)
	case model.ExecFlowOther:
		return fmt.Sprintf("the client %s (its server sent %s, received %s in the last interval): figures are those of a %s, whatever --workload says (%s)",
			flowVerb(p.Flow), units.FormatBytes(float64(p.Sent)), units.FormatBytes(float64(p.Received)), p.Flow, p.Workload)
	case model.ExecIdle:
		return fmt.Sprintf("the client %q moved no payload in the whole run: its throughput and figures per 2 MiB are n/a, not 0", p.Command)
	}
	return targetLong(what)
}

// targetLong is the sentence of each kind of a --target's warning.
func targetLong(what model.WarningParams) string {
	switch p := what.(type) {
	case model.TargetShared:
		return "both sides' target is served by one process: in concurrent mode both loads run in every sample and its calls cannot be split between them, so each side's server figures are n/a"
	case model.TargetUnattributed:
		who := "the target's server"
		if p.PID > 0 {
			who = fmt.Sprintf("the target's server, PID %d,", p.PID)
		}
		return who + " serves both sides: its calls, CPU and wake-ups in a sample in which both loads ran cannot be split and are attributed to neither side " +
			"(that sample's server figures are n/a: a turn switch that could not be read between the loads, as after a pause that did not drain within 2 s, or a failed read); " +
			"each side's server figures are over its other samples, so A's and B's calls together come below the process's own (perf, strace)"
	case model.TargetMeasured:
		return fmt.Sprintf("the target is served by PID %d (%s): measured as a real server", p.PID, p.Command)
	case model.TargetNotMeasured:
		if p.PID > 0 {
			return fmt.Sprintf("the target's server, PID %d (%s), is not measured: %s", p.PID, p.Command, ReasonLong(p.Reason))
		}
		return "the target's server is not measured (its figures are n/a): " + ReasonLong(p.Reason)
	case model.TargetBuffersKept:
		return fmt.Sprintf("the target's server (PID %d) keeps its own buffers: %s", p.PID, ReasonWithFix(p.Reason))
	case model.TargetBufferUnset:
		return fmt.Sprintf("%s %s is not applied: the target's server keeps its own buffers, as it is not measured: %s", p.Setting, p.Buf, ReasonLong(p.Reason))
	case model.TargetPeerUnknown:
		return fmt.Sprintf("the target's server (PID %d) cannot be told our load's connections: its buffers are left as they are: %s", p.PID, p.Err)
	case model.SchedUnknown:
		return "each process's time on a CPU, waiting for one and asleep are n/a: " + schedWhyOf(p)
	}
	return beforeAfterLong(what)
}

// beforeAfterLong is the sentence of the warnings of a before and after:
// a change that changes nothing, turns that could not be whole around a
// change, a payload assumed.
func beforeAfterLong(what model.WarningParams) string {
	switch p := what.(type) {
	case model.NoOpChange:
		return fmt.Sprintf("%s is %s already: a change to it changes nothing, and the samples either side of it are no before and after", p.Setting, p.Value)
	case model.TurnsNotWhole:
		return fmt.Sprintf("alternate turns: the change at %s %s: its before or after segment may hold few samples, or none", seconds(p.At), turnsCut(p))
	case model.PayloadAssumed:
		if p.Export <= 0 {
			return fmt.Sprintf("a real client against a real server: no payload can be counted, and the export's size is unknown (%s): throughput and figures per 2 MiB are n/a", orNoReason(p.Err))
		}
		return fmt.Sprintf("payload assumed: a real client against a real server has no byte counts (unix sockets have none), so each finished run of %q is taken to move the export once (%s), as sweep --exec --server does; throughput and figures per 2 MiB are of that, counted in the sample in which a run ends, whose throughput is the run's (the export over its running time); until %s's first run ends they are n/a, not 0",
			p.Command, size(p.Export), Program(p.Command))
	}
	return string(what.WarnKind())
}

// turnsCut says why a change's turns could not be whole.
func turnsCut(p model.TurnsNotWhole) string {
	turn := seconds(p.Turn)
	switch p.Cut {
	case model.CutByStart:
		return "comes before its side can have a whole turn (" + turn + ") with the setting before it"
	case model.CutByEnd:
		return "leaves the run too short for a whole turn (" + turn + ") after it"
	}
	return fmt.Sprintf("is within a turn (%s) of side %s's: each gets less than a whole turn around it", turn, p.Other)
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) + " s" }

// warningShort is each kind in a line of the panel or the status line.
func warningShort(what model.WarningParams) string {
	switch p := what.(type) {
	case model.Clamped:
		return fmt.Sprintf("%s clamped: %s of %s (%s)", p.Setting, size(p.Got), size(p.Expected), p.Limit)
	case model.FewCores:
		return CountOf(p.Cores, "core") + ": in concurrent mode the sides compete for CPU — m for alternate"
	case model.TurnFailed:
		return fmt.Sprintf("load not %s: %s", pausedWord(p.Pause), p.Err)
	case model.ScriptFailed:
		return fmt.Sprintf("--at %s failed: %s", p.Change, p.Err)
	case model.PlacementFailed:
		return fmt.Sprintf("placement %s not held: %s", p.Placement, strings.Join(p.Failures, "; "))
	case model.ConsumeNotChanged:
		return fmt.Sprintf("%s still not %d: %s", settingWords(p.Setting), p.Value, p.Err)
	case model.CallsUnknown:
		return "client calls n/a: " + ReasonShort(p.Reason)
	case model.RequestsFailed:
		return fmt.Sprintf("%s failed: %s", CountOf(p.Count, "request"), orNoReason(p.LastErr))
	case model.FillNotMeasured:
		return "fill n/a: " + ReasonShort(p.Reason)
	case model.ExecFlowOther:
		return fmt.Sprintf("the client %s: figures are those of a %s, whatever --workload says (%s)", flowVerb(p.Flow), p.Flow, p.Workload)
	case model.ExecIdle:
		return Program(p.Command) + " moved no payload: its figures are n/a"
	case model.TargetShared:
		return "one process serves both targets: server figures n/a in concurrent mode — m for alternate"
	case model.TargetUnattributed:
		return "one process serves both targets: samples in which both loads ran are attributed to neither"
	case model.TargetMeasured:
		return fmt.Sprintf("target served by %s (PID %d): measured", Program(p.Command), p.PID)
	case model.TargetNotMeasured:
		return "target's server not measured: " + ReasonShort(p.Reason)
	case model.TargetBuffersKept:
		return "target's server keeps its buffers: " + ReasonShort(p.Reason)
	case model.TargetBufferUnset:
		return fmt.Sprintf("%s %s not applied: %s", p.Setting, p.Buf, ReasonShort(p.Reason))
	case model.TargetPeerUnknown:
		return fmt.Sprintf("target's server (PID %d) buffers left as they are: %s", p.PID, p.Err)
	case model.SchedUnknown:
		return "cpu wait n/a: " + schedWhyOf(p)
	case model.NoOpChange:
		return fmt.Sprintf("%s is %s already: a change to it changes nothing", p.Setting, p.Value)
	case model.TurnsNotWhole:
		return fmt.Sprintf("the change at %s %s", seconds(p.At), turnsCut(p))
	case model.PayloadAssumed:
		if p.Export <= 0 {
			return "payload n/a: the export's size is unknown"
		}
		return fmt.Sprintf("payload assumed: %s a finished run of %s, n/a until one ends", size(p.Export), Program(p.Command))
	}
	return string(what.WarnKind())
}

func size(n int64) string { return units.FormatSize(n) }

func pauseVerb(pause bool) string {
	if pause {
		return "pause"
	}
	return "resume"
}

func pausedWord(pause bool) string {
	if pause {
		return "paused"
	}
	return "resumed"
}

// flowVerb is what a client did: "read", "wrote".
func flowVerb(f model.Flow) string {
	if f == model.FlowWrite {
		return "wrote"
	}
	return string(f)
}

// settingWords is a setting's name as a sentence says it: "hash threads".
func settingWords(name string) string { return strings.ReplaceAll(name, "-", " ") }

func orNoReason(err string) string {
	if err == "" {
		return "no reason given"
	}
	return err
}
