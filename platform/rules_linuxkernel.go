package platform

// LinuxRules are Linux's: socket(7) says setsockopt doubles the
// SO_SNDBUF/SO_RCVBUF request (the extra half is bookkeeping) and clamps
// it to net.core.wmem_max / rmem_max, unless the caller has CAP_NET_ADMIN
// and uses SO_SNDBUFFORCE, which we do not. A request above the limit is
// granted as wmem_max, never refused.
type LinuxRules struct{}

func (LinuxRules) Name() string  { return "linux" }
func (LinuxRules) Doubles() bool { return true }

func (LinuxRules) LimitNames() []string {
	return []string{"net.core.wmem_max", "net.core.rmem_max", "net.core.wmem_default", "net.core.rmem_default"}
}

// Limit is net.core.wmem_max, confirmed on a socket.
func (LinuxRules) Limit(k Kernel) Limit {
	l := Limit{Rules: "linux", Doubles: true, Over: OverClamps, Sysctl: "net.core.wmem_max"}
	if v, err := k.Sysctl(l.Sysctl); err == nil {
		l.SysctlValue, l.MaxRequest = v, v
	}
	// wmem_max is the largest request Linux takes; the probe bisects up to
	// 64 MiB when the sysctl cannot be read.
	return confirm(k, l, max(l.SysctlValue, 64<<20))
}

func fmtBytes(n int) string { return HumanSize(n) }
