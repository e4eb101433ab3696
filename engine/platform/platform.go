// Package platform hides what differs between operating systems about
// socket buffers: their defaults and limits, how a request becomes an
// effective size, and how to lift a limit. One file per OS implements
// the small part that differs.
package platform

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"nbdscope/nbd"
	"nbdscope/units"
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
	UnixSndbufMax     int `json:"unix_sndbuf_max"` // largest effective SO_SNDBUF
	TCPSndbufDefault  int `json:"tcp_sndbuf_default"`
	TCPRcvbufDefault  int `json:"tcp_rcvbuf_default"`

	// Limits are the sysctl values that bound requests, by name.
	Limits map[string]int `json:"limits"`
	// Doubles is true where the kernel doubles a request (Linux).
	Doubles bool `json:"doubles"`
}

// Probe reads the facts of this machine.
func Probe() Facts {
	f := Facts{OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU(), Limits: map[string]int{}}
	f.Kernel = kernelVersion()
	f.AllowedCPUs, f.CanPin = AllowedCPUs(), PinSupported
	f.CPUModel = cpuModel()
	f.UnixSndbufDefault, _, _ = nbd.ProbeSocketBuffer("unix", nbd.SendBuf, 0)
	f.UnixRcvbufDefault, _, _ = nbd.ProbeSocketBuffer("unix", nbd.RecvBuf, 0)
	f.TCPSndbufDefault, _, _ = nbd.ProbeSocketBuffer("tcp", nbd.SendBuf, 0)
	f.TCPRcvbufDefault, _, _ = nbd.ProbeSocketBuffer("tcp", nbd.RecvBuf, 0)
	for _, name := range limitNames {
		if v, err := readLimit(name); err == nil {
			f.Limits[name] = v
		}
	}
	f.Doubles = doubles
	// The largest effective size: what asking for 1 GiB gives.
	_, f.UnixSndbufMax, _ = nbd.ProbeSocketBuffer("unix", nbd.SendBuf, 1<<30)
	return f
}

// Request returns the setsockopt value that gives the effective size eff
// (Linux halves it, since the kernel doubles requests).
func Request(eff int) int { return nbd.RequestForEffective(eff) }

// MacOSRequest is the request that gives macOS's unix-socket default
// (8 KiB effective) on this OS.
func MacOSRequest() int { return nbd.RequestForEffective(8 << 10) }

// Clamp describes a request the kernel did not grant in full.
type Clamp struct {
	Which     string // SO_SNDBUF or SO_RCVBUF
	Requested int    // what was asked with setsockopt
	Effective int    // what getsockopt reports
	Limit     string // the sysctl that bounds it
	Fix       string // the command that lifts the limit now
	Persist   string // the line that keeps it across reboots
	Where     string // where Persist goes
}

func (c Clamp) String() string {
	return fmt.Sprintf("%s %s requested, %s effective: clamped by %s. Fix: %s (persist: %q in %s)",
		c.Which, units.FormatSize(int64(c.Requested)), units.FormatSize(int64(c.Effective)), c.Limit, c.Fix, c.Persist, c.Where)
}

// CheckClamp reports whether an effective size falls short of the request
// and, if so, how to lift the limit. ok is false when nothing was clamped.
func CheckClamp(which nbd.SockBuf, requested, effective int) (Clamp, bool) {
	want := expectedEffective(requested)
	if requested <= 0 || effective >= want || requested < 4096 {
		return Clamp{}, false
	}
	name, value := limitFor(which, requested)
	c := Clamp{Which: which.String(), Requested: requested, Effective: effective, Limit: name}
	c.Fix, c.Persist, c.Where = fixFor(name, value)
	return c, true
}

// ExpectedEffective is the effective size an unclamped request gives.
func ExpectedEffective(requested int) int { return expectedEffective(requested) }

// Explain says in one line why an effective size differs from the request.
func Explain(requested, effective int) string {
	if requested <= 0 {
		return "OS default"
	}
	if doubles && effective == 2*requested {
		return "the kernel doubles every request (socket(7)): half is bookkeeping"
	}
	if effective < expectedEffective(requested) {
		return "clamped by the kernel limit"
	}
	if effective > requested && !doubles {
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
