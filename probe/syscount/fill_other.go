//go:build !linux

package syscount

import (
	"errors"
	"time"
)

// FillMeter measures send-buffer fill in the kernel: Linux only.
type FillMeter struct{}

var errFillLinux = errors.New("send-buffer fill is measured in the kernel on Linux only")

// OpenFillMeter says the kernel cannot measure fill here: the sampler
// (probe/sockdiag) does.
func OpenFillMeter() (*FillMeter, error) { return nil, errFillLinux }

// OpenFillEvents is OpenFillMeter's exact way: Linux only too.
func OpenFillEvents() (*FillMeter, error) { return nil, errFillLinux }

func (m *FillMeter) Set(string, []uint64) error { return nil }
func (m *FillMeter) Take(string) FillWindow     { return FillWindow{} }
func (m *FillMeter) Close()                     {}
func (m *FillMeter) Watching() int              { return 0 }

// FoundBy: no meter finds sockets here.
func (m *FillMeter) FoundBy() (string, string) { return FoundBySend, errFillLinux.Error() }

// VerifierLog is the kernel verifier's log in err: none here.
func VerifierLog(error, int) string { return "" }

// FillTimerCost is what the timer's fill programs cost: Linux only.
type FillTimerCost struct {
	Sockets                        int
	TickNs, TicksPerSecond, FindNs float64
	Ticks, Finds                   uint64
	FoundBy, NotByIterator         string
	FindAtSends                    bool
	IterNs                         float64
	IterVisits                     uint64
}

// MeasureFillTimer says the timer's programs run on Linux only.
func MeasureFillTimer(int, time.Duration) (FillTimerCost, error) {
	return FillTimerCost{}, errFillLinux
}
