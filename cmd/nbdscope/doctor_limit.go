package main

import (
	"fmt"

	"nbdscope/nbd"
	"nbdscope/platform"
)

// limitLine says how this kernel bounds SO_SNDBUF: the largest request
// granted in full, what it reads back as, what a larger one gets, and the
// command that would grant 8m.
func limitLine(l platform.Limit) string {
	if !l.Known() {
		return "✗ SO_SNDBUF limit: could not be worked out"
	}
	sz := platform.HumanSize
	how := fmt.Sprintf("%s = %s", l.Sysctl, sz(l.SysctlValue))
	switch {
	case l.SysctlValue == 0:
		how = l.Sysctl + " unreadable"
	case l.Rules == "xnu" && l.Over == platform.OverRefuses:
		how += " × 2048/2304, as XNU's sbreserve computes it"
	}
	s := fmt.Sprintf("SO_SNDBUF limit: largest request granted in full %s (effective %s; %s); above it the kernel %s",
		sz(l.MaxRequest), sz(l.MaxEffective), how, l.Over)
	if l.Over == platform.OverRefuses {
		s += " (setsockopt fails with ENOBUFS)"
	}
	if l.Probed {
		s += ", confirmed by a probe"
	}
	if l.Note != "" {
		s += " — " + l.Note
	}
	if l.MaxRequest < 8<<20 {
		c := l.Fix(nbd.SendBuf, 8<<20)
		s += fmt.Sprintf(".\n  for 8m:   %s\n  persist:  add %q to %s", c.Fix, c.Persist, c.Where)
	}
	return s
}

// doctorProbe asks a fresh socket for want, unless the kernel would refuse
// it: then it says so with the fix instead of failing.
func doctorProbe(l platform.Limit, want int) (line string, ok bool, err error) {
	sz := platform.HumanSize
	if c, refused := l.Refuses(nbd.SendBuf, want); refused {
		return fmt.Sprintf("✗ a %s send buffer is refused (above %s).\n  fix now:  %s\n  persist:  add %q to %s",
			sz(want), sz(c.MaxRequest), c.Fix, c.Persist, c.Where), false, nil
	}
	_, eff, err := nbd.ProbeSocketBuffer("unix", nbd.SendBuf, want)
	if err != nil {
		return "", false, err
	}
	if c, clamped := l.Check(nbd.SendBuf, want, eff); clamped {
		return fmt.Sprintf("✗ a %s send buffer is clamped to %s by %s.\n  fix now:  %s\n  persist:  add %q to %s",
			sz(want), sz(eff), c.Limit, c.Fix, c.Persist, c.Where), false, nil
	}
	return fmt.Sprintf("✓ a %s send buffer is granted (effective %s): %s", sz(want), sz(eff), platform.Explain(want, eff)), true, nil
}
