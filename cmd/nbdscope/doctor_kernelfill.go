package main

import (
	"strings"

	"nbdscope/probe/syscount"
)

// doctor's kernel programs: whether the send-buffer fill is measured in
// the kernel here (syscount.FillMeter) or sampled from user space, and,
// when the kernel refused a program (a fill one, or a counting one in
// the calls probe), the verifier's own log, which says at which
// instruction and why.

// doctorKernelFill is its JSON ("kernel_fill").
type doctorKernelFill struct {
	OK          bool   `json:"ok"`
	Why         string `json:"why,omitempty"`
	VerifierLog string `json:"verifier_log,omitempty"`
}

// openFillMeter loads the fill programs; tests replace it.
var openFillMeter = syscount.OpenFillMeter

// verifierLogLines is how much of a verifier's log doctor prints: its end.
const verifierLogLines = 20

func probeKernelFill() doctorKernelFill {
	m, err := openFillMeter()
	if err != nil {
		return doctorKernelFill{Why: err.Error(), VerifierLog: syscount.VerifierLog(err, verifierLogLines)}
	}
	m.Close()
	return doctorKernelFill{OK: true}
}

// kernelFillLine is doctor's line for it.
func kernelFillLine(k doctorKernelFill) string {
	if k.OK {
		return "✓ send-buffer fill: measured in the kernel at every change of a unix sender's buffer (TCP's is sampled)"
	}
	return "✗ send-buffer fill in the kernel: n/a, sampled from user space instead: " + k.Why + verifierText(k.VerifierLog)
}

// verifierText is a verifier's log as doctor's lines under a refusal
// ("" without one).
func verifierText(log string) string {
	if log == "" {
		return ""
	}
	return "\n  the kernel's verifier said:\n    " + strings.ReplaceAll(log, "\n", "\n    ")
}
