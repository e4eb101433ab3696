//go:build !linux

package platform

// cpuBusy is not read here: there is no /proc/stat.
func cpuBusy() (float64, bool) { return 0, false }
