package platform

import (
	"fmt"

	"nbdscope/nbd"
	"nbdscope/units"
)

// What a kernel does with a request above its limit (Limit.Over).
const (
	OverClamps  = "clamps"  // grants less than asked (Linux; macOS 14.4 and later)
	OverRefuses = "refuses" // setsockopt fails with ENOBUFS (macOS before 14.4)
)

// Limit is how this kernel bounds SO_SNDBUF requests on a unix stream
// socket: the rules for doubling, clamping and refusing, as data, so the
// engine, the UI and doctor read one definition (and tests can hand them
// any kernel's).
type Limit struct {
	// Rules names the rule set: "linux" or "xnu".
	Rules string `json:"rules"`
	// Doubles is true where the kernel stores twice the request (Linux).
	Doubles bool `json:"doubles"`
	// Over is what a request above MaxRequest gets: OverClamps or
	// OverRefuses.
	Over string `json:"over"`
	// MaxRequest is the largest request granted in full, MaxEffective what
	// it reads back as (2×MaxRequest where the kernel doubles).
	MaxRequest   int `json:"max_request"`
	MaxEffective int `json:"max_effective"`
	// Sysctl is the setting that bounds requests, SysctlValue its value
	// now (0 when it could not be read).
	Sysctl      string `json:"sysctl"`
	SysctlValue int    `json:"sysctl_value"`
	// SysctlCeiling is the largest value the sysctl accepts (0: none
	// known). macOS refuses kern.ipc.maxsockbuf above
	// kern.ipc.nmbclusters×128 with ERANGE.
	SysctlCeiling int `json:"sysctl_ceiling,omitempty"`
	// Probed is true when a probe on real sockets confirmed MaxRequest
	// and Over; Note says what the probe found when it disagreed with the
	// sysctl.
	Probed bool   `json:"probed"`
	Note   string `json:"note,omitempty"`
}

// Known reports whether the limit was worked out at all.
func (l Limit) Known() bool { return l.MaxRequest > 0 }

// Expected is the effective size a request within the limit gives.
func (l Limit) Expected(req int) int {
	if l.Doubles {
		return 2 * req
	}
	return req
}

// SysctlFor is the value of the bounding sysctl that grants req in full.
// On Linux net.core.wmem_max bounds the request itself. XNU's sbreserve
// before 14.4 refused cc > sb_max * MCLBYTES / (MSIZE + MCLBYTES), so
// granting req needs sb_max ≥ req × (256+2048)/2048, rounded up; from
// 14.4 it needs sb_max ≥ req.
func (l Limit) SysctlFor(req int) int {
	if l.Rules == "xnu" && l.Over == OverRefuses {
		return (req*(xnuMSIZE+xnuMCLBYTES) + xnuMCLBYTES - 1) / xnuMCLBYTES
	}
	return req
}

// Refuses reports whether the kernel will refuse req outright (ENOBUFS)
// and, if so, how to lift the limit. Nothing is asked of the kernel: the
// engine checks a change before it sends it, so a refused request never
// leaves a side half-changed.
func (l Limit) Refuses(which nbd.SockBuf, req int) (Clamp, bool) {
	if l.Over != OverRefuses || !l.Known() || req <= l.MaxRequest {
		return Clamp{}, false
	}
	return l.problem(which, req, 0, true), true
}

// Clamped reports whether a request was (or will be) granted less than
// in full. Where the kernel doubles (Linux) the readback is exact and
// steady, so it is compared with twice the request. On XNU a live
// readback is not the figure to judge by (uipc_usrreq.c lowers the
// sender's sb_hiwat by the bytes queued in the peer), and sbreserve
// stores a request within the limit exactly as given: whether a request
// is clamped follows from the request and the limit alone.
func (l Limit) Clamped(req, eff int) bool {
	if req < 4096 { // default, macos emulation: not a size the user asked for
		return false
	}
	if l.Doubles || !l.Known() {
		return eff > 0 && eff < l.Expected(req)
	}
	return l.Over == OverClamps && req > l.MaxRequest
}

// Check reports whether a request came back clamped and, if so, how to
// lift the limit. ok is false when nothing was clamped.
func (l Limit) Check(which nbd.SockBuf, req, eff int) (Clamp, bool) {
	if !l.Clamped(req, eff) {
		return Clamp{}, false
	}
	if !l.Doubles && l.Known() {
		eff = l.MaxEffective // XNU clamps to sb_max exactly
	}
	return l.problem(which, req, eff, false), true
}

// Fix is how to get req granted in full, whether or not it is now.
func (l Limit) Fix(which nbd.SockBuf, req int) Clamp {
	return l.problem(which, req, 0, l.Over == OverRefuses && req > l.MaxRequest)
}

func (l Limit) problem(which nbd.SockBuf, req, eff int, refused bool) Clamp {
	name := l.Sysctl
	if l.Rules == "linux" && which == nbd.RecvBuf {
		name = "net.core.rmem_max"
	}
	if name == "" {
		name = "the kernel's socket buffer limit"
	}
	value := l.SysctlFor(req)
	c := Clamp{Which: which.String(), Requested: req, Effective: eff, Limit: name, Refused: refused,
		MaxRequest: l.MaxRequest, Over: l.Over}
	if l.Rules == "xnu" {
		c.Fix = fmt.Sprintf("sudo sysctl %s=%d", name, value)
		c.Persist, c.Where = fmt.Sprintf("%s=%d", name, value), "/etc/sysctl.conf"
		if l.SysctlCeiling > 0 && value > l.SysctlCeiling {
			c.Fix += fmt.Sprintf(" (beyond this Mac's ceiling %d = kern.ipc.nmbclusters×128: the sysctl will fail with ERANGE)", l.SysctlCeiling)
		}
	} else {
		c.Fix = fmt.Sprintf("sudo sysctl -w %s=%d", name, value)
		c.Persist, c.Where = fmt.Sprintf("%s = %d", name, value), "/etc/sysctl.d/90-nbdscope.conf"
	}
	return c
}

// Clamp describes a request the kernel did not grant in full: clamped
// (granted less) or refused (setsockopt failed with ENOBUFS).
type Clamp struct {
	Which      string // SO_SNDBUF or SO_RCVBUF
	Requested  int    // what was asked with setsockopt
	Effective  int    // what getsockopt reports (0 when refused)
	Refused    bool   // the kernel refuses the request outright
	MaxRequest int    // the largest request granted in full
	Over       string // OverClamps or OverRefuses
	Limit      string // the sysctl that bounds it
	Fix        string // the command that lifts the limit now
	Persist    string // the line that keeps it across reboots
	Where      string // where Persist goes
}

func (c Clamp) String() string {
	sz := HumanSize
	if c.Refused {
		return fmt.Sprintf("%s %s is above this kernel's limit of %s (%s): setsockopt would fail with ENOBUFS. Fix: %s (persist: %q in %s)",
			c.Which, sz(c.Requested), sz(c.MaxRequest), c.Limit, c.Fix, c.Persist, c.Where)
	}
	return fmt.Sprintf("%s %s requested, %s effective: clamped by %s. Fix: %s (persist: %q in %s)",
		c.Which, sz(c.Requested), sz(c.Effective), c.Limit, c.Fix, c.Persist, c.Where)
}

// LadderTop is the largest request the +/- ladder should offer: the
// limit where the kernel refuses what is above it, none (0) where it
// clamps, since a clamp is shown with its fix and the user may want to
// see it.
func (l Limit) LadderTop() int {
	if l.Over == OverRefuses && l.Known() {
		return l.MaxRequest
	}
	return 0
}

// HumanSize prints a size as the user types it ("8m") when it is a whole
// unit, else exactly and approximately ("7456540 bytes (7.11 MiB)").
func HumanSize(n int) string {
	s := units.FormatSize(int64(n))
	if n < 1024 || s[len(s)-1] >= 'a' {
		return s
	}
	return s + " bytes (" + units.FormatBytes(float64(n)) + ")"
}
