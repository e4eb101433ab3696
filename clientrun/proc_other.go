//go:build !linux

package clientrun

// GroupUsage cannot read a running process tree's CPU here (no /proc):
// only finished runs are measured (wait4).
func GroupUsage(pgid int) (Result, bool) { return Result{}, false }

// Group cannot follow a running process tree here (no /proc): only
// finished runs are measured (wait4).
type Group struct{}

// NewGroup follows process group pgid, which here reads nothing.
func NewGroup(pgid int) *Group { return &Group{} }

// Usage is never known here.
func (g *Group) Usage() (Result, bool) { return Result{}, false }

// Members are none here.
func (g *Group) Members() []int { return nil }
