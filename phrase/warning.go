package phrase

import (
	"fmt"
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
	}
	return ""
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
	}
	return string(what.WarnKind())
}

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
