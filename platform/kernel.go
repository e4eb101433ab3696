package platform

import (
	"errors"

	"golang.org/x/sys/unix"

	"nbdscope/nbd"
)

// Kernel is the little of an OS the socket-buffer rules talk to. The real
// one (NativeKernel) uses fresh unix stream sockets and sysctl; tests use
// doubles that model Linux and XNU, so the darwin logic runs on Linux.
type Kernel interface {
	// Set asks a fresh unix stream socket for a buffer of size and returns
	// what getsockopt reads right after, before any data flows; or the
	// kernel's error (ENOBUFS where XNU refuses).
	Set(which nbd.SockBuf, size int) (effective int, err error)
	// Get reads the buffer of a fresh socket: the OS default.
	Get(which nbd.SockBuf) (int, error)
	// Sysctl reads a numeric kernel setting by name.
	Sysctl(name string) (int, error)
	// Release is the kernel release ("6.1.0", "23.4.0").
	Release() string
}

// Rules are one OS's rules for socket buffers: whether requests are
// doubled, and how the limit is worked out and what happens above it.
type Rules interface {
	Name() string
	Doubles() bool
	// Limit works out the SO_SNDBUF limit from the kernel's settings and
	// confirms it with a probe that never asks for an absurd size.
	Limit(k Kernel) Limit
	// LimitNames are the sysctls worth showing (doctor, the header).
	LimitNames() []string
}

// nativeKernel is the running OS.
type nativeKernel struct{}

// NativeKernel returns the running OS's kernel.
func NativeKernel() Kernel { return nativeKernel{} }

func (nativeKernel) Set(which nbd.SockBuf, size int) (int, error) {
	_, eff, err := nbd.ProbeSocketBuffer("unix", which, size)
	return eff, err
}

func (nativeKernel) Get(which nbd.SockBuf) (int, error) {
	def, _, err := nbd.ProbeSocketBuffer("unix", which, 0)
	return def, err
}

func (nativeKernel) Sysctl(name string) (int, error) { return readLimit(name) }

func (nativeKernel) Release() string { return kernelRelease() }

// grantedInFull asks for size and reports whether the kernel stored it as
// the rules expect (exactly, or doubled), with what it read back and
// whether the kernel refused with ENOBUFS.
func grantedInFull(k Kernel, doubles bool, size int) (ok bool, eff int, refused bool) {
	eff, err := k.Set(nbd.SendBuf, size)
	if err != nil {
		return false, 0, errors.Is(err, unix.ENOBUFS)
	}
	want := size
	if doubles {
		want *= 2
	}
	return eff >= want, eff, false
}

// bisectLimit finds the largest request in [lo, hi] granted in full,
// given that lo is granted and hi is not: about log2(hi-lo) probes, each
// on a fresh socket, none above hi.
func bisectLimit(k Kernel, doubles bool, lo, hi int) int {
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok, _, _ := grantedInFull(k, doubles, mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// confirm checks a limit predicted from the sysctls on real sockets: the
// predicted maximum must be granted in full and one byte more must not
// be. When either fails it bisects between the default (always granted)
// and ceiling. It then records what the kernel does above the limit.
func confirm(k Kernel, l Limit, ceiling int) Limit {
	floor := 4096
	if def, err := k.Get(nbd.SendBuf); err == nil && def > 0 {
		floor = def
		if l.Doubles {
			floor = def / 2
		}
	}
	atOK, _, _ := grantedInFull(k, l.Doubles, l.MaxRequest)
	aboveOK, _, _ := grantedInFull(k, l.Doubles, l.MaxRequest+1)
	if l.MaxRequest <= 0 || !atOK || aboveOK {
		hi := max(ceiling, l.MaxRequest) + 1
		if ok, _, _ := grantedInFull(k, l.Doubles, floor); !ok {
			l.Note = "the probe could not set even the default size"
			return l
		}
		if ok, _, _ := grantedInFull(k, l.Doubles, hi); ok {
			l.Note = "the probe found no limit up to " + fmtBytes(hi)
			l.MaxRequest = hi
		} else {
			found := bisectLimit(k, l.Doubles, floor, hi)
			if l.MaxRequest > 0 && found != l.MaxRequest {
				l.Note = "the probe found " + fmtBytes(found) + ", not the " + fmtBytes(l.MaxRequest) + " the sysctl predicts"
			}
			l.MaxRequest = found
		}
	}
	_, eff, refused := grantedInFull(k, l.Doubles, l.MaxRequest+1)
	switch {
	case refused:
		l.Over = OverRefuses
	case eff > 0:
		l.Over = OverClamps
	}
	l.MaxEffective = l.Expected(l.MaxRequest)
	l.Probed = true
	return l
}
