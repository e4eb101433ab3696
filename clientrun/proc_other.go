//go:build !linux

package clientrun

// GroupUsage cannot read a running process tree's CPU here (no /proc):
// only finished runs are measured (wait4).
func GroupUsage(pgid int) (Result, bool) { return Result{}, false }
