package model

// FillSource is the fill source the run asks for: the kernel's timer
// unless the exact programs (--fill-source kernel-events) or the sampler
// (--fill-source sampler) were asked for. The kernel is the default
// because it reads the level 1000 times a second in the kernel, whatever
// runs, at a cost that does not grow with the data (the exact programs,
// at every skb, made the pair at a 2 MiB buffer 0.87-0.97x as fast as the
// sampler's runs), where the sampler reads it 100 times a second from a
// thread that must get a core the measured pair shares, and so leans
// toward the moments the pair cannot run (against a timer reading the
// level in the kernel, the sampler's empty % at an 8 KiB buffer was up to
// 21 points high, the kernel's within 5), and because the sampler's
// wake-ups were most of the controller's own CPU. A side the kernel
// cannot measure (TCP data sockets, or programs that cannot load: no BPF
// rights, no kernel BTF, macOS) is sampled all the same, and the report
// names what measured each side (SideReport.FillSource; docs/figures.md,
// "Send-buffer fill").
func (c Config) FillSource() string {
	if c.Fill == FillSourceSampler || c.Fill == FillSourceEvents {
		return c.Fill
	}
	return FillSourceKernel
}
