package phrase_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
	"nbdscope/phrase"
)

// examples are a warning of each kind, with parameters as the engine
// raises them: a kind added to the model without one fails
// TestEveryWarningKindIsWorded.
var examples = map[model.WarnKind]model.WarningParams{
	model.WarnClamp: model.Clamped{Setting: "sndbuf", Requested: 2 << 20, Expected: 4 << 20, Got: 416 << 10, Limit: "net.core.wmem_max",
		Command: "sudo sysctl -w net.core.wmem_max=2097152", Persist: "net.core.wmem_max = 2097152", Where: "/etc/sysctl.d/90-nbdscope.conf"},
	model.WarnCores:     model.FewCores{Cores: 2},
	model.WarnTurns:     model.TurnFailed{Pause: true, Err: "gate jammed"},
	model.WarnScript:    model.ScriptFailed{Change: "2s:a.sndbuf=64k", Err: "side A is down"},
	model.WarnPlacement: model.PlacementFailed{Placement: model.PlaceSplit, Failures: []string{"load: invalid argument"}},
	model.WarnConsume:   model.ConsumeNotChanged{Setting: model.SetHashThreads, Value: 4, Err: "child gone"},
	model.WarnCalls: model.CallsUnknown{Reason: model.Reason{Kind: model.ReasonNoPermission, What: "socket calls",
		Detail: "kernel.perf_event_paranoid is 3", Fix: "sudo sysctl -w kernel.perf_event_paranoid=2"}},
	model.WarnRequests:           model.RequestsFailed{Count: 3, Seconds: 0.5, LastErr: "EPERM"},
	model.WarnFill:               model.FillNotMeasured{Reason: model.Reason{Kind: model.ReasonNoConnection, PIDs: []int{10, 11}, Samples: 20}},
	model.WarnExecFlow:           model.ExecFlowOther{Flow: model.FlowRead, Workload: model.WorkWrite, Sent: 64 << 20},
	model.WarnExecIdle:           model.ExecIdle{Command: "qemu-img convert {uri} out.img"},
	model.WarnTargetShared:       model.TargetShared{},
	model.WarnTargetUnattributed: model.TargetUnattributed{PID: 42},
	model.WarnTargetMeasured:     model.TargetMeasured{PID: 42, Command: "/usr/bin/qemu-nbd -k '/tmp/a b.sock' disk.img"},
	model.WarnTargetNotMeasured:  model.TargetNotMeasured{Reason: model.Reason{Kind: model.ReasonNotLocal}},
	model.WarnTargetBuffersKept:  model.TargetBuffersKept{PID: 42, Reason: model.Reason{Kind: model.ReasonNoPermission, Detail: "kernel.yama.ptrace_scope is 2"}},
	model.WarnTargetBufferUnset:  model.TargetBufferUnset{Setting: "sndbuf", Buf: "2m", Reason: model.Reason{Kind: model.ReasonNotLocal}},
	model.WarnTargetPeer:         model.TargetPeerUnknown{PID: 42, Err: "child gone"},
}

// Each kind of warning is worded in a short and a long form, distinct and
// not empty, the long naming its side; its JSON reads back as the same
// parameters, with the long form as its text.
func TestEveryWarningKindIsWorded(t *testing.T) {
	for _, k := range model.WarnKinds() {
		what, ok := examples[k]
		if !ok {
			t.Errorf("%s: no example here: add one, and its words", k)
			continue
		}
		if what.WarnKind() != k {
			t.Errorf("%s: the example is a %s", k, what.WarnKind())
		}
		w := model.Warn("B", what)
		short, long := phrase.WarningShort(w), phrase.WarningLong(w)
		if short == "" || long == "" || short == long {
			t.Errorf("%s: short %q, long %q: want both, and distinct", k, short, long)
		}
		if !strings.HasPrefix(long, "side B: ") {
			t.Errorf("%s: long %q does not name side B", k, long)
		}
		if strings.Contains(long, string(k)) && !strings.Contains(string(k), "-") {
			t.Logf("%s: long %q", k, long)
		}
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		var back model.Warning
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if !strings.Contains(string(b), `"text":`) || !reflect.DeepEqual(back, w) || phrase.WarningLong(back) != long {
			t.Errorf("%s: JSON %s reads back as %+v", k, b, back)
		}
	}
}

// Each reason kind has a short form and a long one, distinct and not
// empty.
func TestEveryReasonKindIsWorded(t *testing.T) {
	for _, k := range model.ReasonKinds {
		r := model.Reason{Kind: k, Text: "a reason saved before reasons had kinds: its words"}
		short, long := phrase.ReasonShort(r), phrase.ReasonLong(r)
		if short == "" || long == "" || short == long || short == string(k) || long == string(k) {
			t.Errorf("%s: short %q, long %q: want both, worded, and distinct", k, short, long)
		}
	}
}

// A run saved before warnings had parameters reads, and is worded by its
// own text and fix.
func TestWarningsSavedBeforeParamsRead(t *testing.T) {
	rep := reporttest.WorkloadChanges(t)
	if len(rep.Warnings) == 0 {
		t.Fatal("the saved run has no warnings")
	}
	w := rep.Warnings[0]
	if w.What != nil || w.Kind != model.WarnCores || !strings.HasPrefix(phrase.WarningLong(w), "this machine has 2 cores") ||
		phrase.WarningFix(w) != "press m or use --mode alternate" {
		t.Errorf("old warning %+v: long %q, fix %q", w, phrase.WarningLong(w), phrase.WarningFix(w))
	}
}

// A reason saved as a sentence reads as a text reason, and is its own
// words; one written now carries its kind, parameters and long form.
func TestReasonSavedAsSentenceReads(t *testing.T) {
	old := []byte(`{"client_calls_na": "kernel.perf_event_paranoid is 3", "fill_na": "no connection between PID 1 and PID 2 found", "payload": {}, "server": {}}`)
	var run model.ExecRun
	if err := json.Unmarshal(old, &run); err != nil {
		t.Fatal(err)
	}
	if run.CallsNA == nil || run.CallsNA.Kind != model.ReasonText || phrase.ReasonLong(*run.CallsNA) != "kernel.perf_event_paranoid is 3" ||
		run.FillNA == nil || phrase.ReasonShort(*run.FillNA) != "no connection between PID 1 and PID 2 found" {
		t.Errorf("old reasons read as %+v, %+v", run.CallsNA, run.FillNA)
	}
	run.CallsNA = &model.Reason{Kind: model.ReasonCountingOff}
	b, _ := json.Marshal(run)
	if !strings.Contains(string(b), `"client_calls_na":{"kind":"counting-off","text":"counting is turned off (NBDSCOPE_SYSCOUNT=off)"}`) {
		t.Errorf("a reason now: %s", b)
	}
}

func TestProgramIsTheCommandsFirstWord(t *testing.T) {
	for cmd, want := range map[string]string{
		"/usr/bin/qemu-nbd -k '/tmp/a b.sock' x.img": "qemu-nbd",
		"'/opt/my tools/nbdcopy' {uri} null:":        "nbdcopy",
		"":                                           "",
		"qemu-img 'unclosed":                         "qemu-img",
	} {
		if got := phrase.Program(cmd); got != want {
			t.Errorf("phrase.Program(%q) = %q, want %q", cmd, got, want)
		}
	}
	if got := []string{phrase.CountOf(1, "socket"), phrase.CountOf(2, "socket"), phrase.CountOf(0, "core")}; !slices.Equal(got, []string{"1 socket", "2 sockets", "0 cores"}) {
		t.Errorf("counts %q", got)
	}
}
