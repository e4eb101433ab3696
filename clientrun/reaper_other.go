//go:build !linux

package clientrun

// No subreaper here (PR_SET_CHILD_SUBREAPER is Linux's; macOS has none): a
// process that leaves its group (setsid, a daemon's double fork) is out of
// reach of the group's kill and of the janitor, as it always was.
type reaper struct{}

var theReaper reaper

func (reaper) track(pgid int) {}
func (reaper) ended(pgid int) {}
