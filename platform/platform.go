// Package platform hides what differs between operating systems about
// socket buffers: their defaults and limits, how a request becomes an
// effective size, and how to lift a limit. One file per OS implements
// the small part that differs; the rules of each OS (LinuxRules,
// XNURules) are plain Go behind the Rules and Kernel interfaces, so the
// darwin logic runs, against a double of XNU, in the tests on Linux.
package platform

import (
	"os"
	"runtime"
	"strings"
	"sync"

	"nbdscope/nbd"
)

// Facts describe this machine's socket buffers, as probed at start.
type Facts struct {
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Kernel   string `json:"kernel"`
	CPUModel string `json:"cpu_model"`
	Cores    int    `json:"cores"`
	// AllowedCPUs are the CPUs this process may run on (taskset, cpusets);
	// CanPin tells whether processes can be held to chosen ones.
	AllowedCPUs []int `json:"allowed_cpus"`
	CanPin      bool  `json:"can_pin"`

	UnixSndbufDefault int `json:"unix_sndbuf_default"` // effective, fresh socket
	UnixRcvbufDefault int `json:"unix_rcvbuf_default"`
	UnixSndbufMax     int `json:"unix_sndbuf_max"` // largest effective SO_SNDBUF (SndbufLimit.MaxEffective)
	TCPSndbufDefault  int `json:"tcp_sndbuf_default"`
	TCPRcvbufDefault  int `json:"tcp_rcvbuf_default"`

	// Limits are the sysctl values that bound requests, by name.
	Limits map[string]int `json:"limits"`
	// Doubles is true where the kernel doubles a request (Linux).
	Doubles bool `json:"doubles"`
	// SndbufLimit is how the kernel bounds SO_SNDBUF: the largest request
	// granted in full, what happens above it and the sysctl that lifts it.
	SndbufLimit Limit `json:"sndbuf_limit"`
}

// Probe reads the facts of this machine.
func Probe() Facts { return ProbeWith(Native, NativeKernel()) }

// ProbeWith reads the facts through a kernel and its rules (tests hand it
// a double).
func ProbeWith(r Rules, k Kernel) Facts {
	f := Facts{OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU(), Limits: map[string]int{}}
	f.Kernel = kernelVersion()
	f.AllowedCPUs, f.CanPin = AllowedCPUs(), PinSupported
	f.CPUModel = cpuModel()
	f.UnixSndbufDefault, _ = k.Get(nbd.SendBuf)
	f.UnixRcvbufDefault, _ = k.Get(nbd.RecvBuf)
	f.TCPSndbufDefault, _, _ = nbd.ProbeSocketBuffer("tcp", nbd.SendBuf, 0)
	f.TCPRcvbufDefault, _, _ = nbd.ProbeSocketBuffer("tcp", nbd.RecvBuf, 0)
	for _, name := range r.LimitNames() {
		if v, err := k.Sysctl(name); err == nil {
			f.Limits[name] = v
		}
	}
	f.Doubles = r.Doubles()
	f.SndbufLimit = r.Limit(k)
	f.UnixSndbufMax = f.SndbufLimit.MaxEffective
	return f
}

var (
	nativeOnce  sync.Once
	nativeLimit Limit
)

// NativeLimit is this machine's SO_SNDBUF limit, probed once.
func NativeLimit() Limit {
	nativeOnce.Do(func() { nativeLimit = Native.Limit(NativeKernel()) })
	return nativeLimit
}

// Request returns the setsockopt value that gives the effective size eff
// (Linux halves it, since the kernel doubles requests).
func Request(eff int) int { return nbd.RequestForEffective(eff) }

// MacOSRequest is the request that gives macOS's unix-socket default
// (8 KiB effective) on this OS.
func MacOSRequest() int { return nbd.RequestForEffective(8 << 10) }

// CheckClamp reports whether a request was granted less than in full on
// this machine and, if so, how to lift the limit (Limit.Check). ok is
// false when nothing was clamped.
func CheckClamp(which nbd.SockBuf, requested, effective int) (Clamp, bool) {
	if requested <= 0 {
		return Clamp{}, false
	}
	return NativeLimit().Check(which, requested, effective)
}

// ExpectedEffective is the effective size an unclamped request gives.
func ExpectedEffective(requested int) int { return NativeLimit().Expected(requested) }

// Explain says in one line why an effective size differs from the request.
func Explain(requested, effective int) string {
	l := NativeLimit()
	switch {
	case requested <= 0:
		return "OS default"
	case l.Doubles && effective == 2*requested:
		return "the kernel doubles every request (socket(7)): half is bookkeeping"
	case l.Clamped(requested, effective):
		return "clamped by the kernel limit"
	case !l.Doubles && effective == requested:
		return "stored as requested (XNU neither doubles nor rounds)"
	case effective > requested && !l.Doubles:
		return "raised to the kernel minimum"
	}
	return ""
}

func cpuModel() string {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return sysctlCPUModel()
}
