package model

// FillSource is the fill source the run asks for: the kernel unless the
// sampler was asked for (--fill-source sampler). The kernel is the
// default because it measures every change of the sender's buffer,
// weighted by time, where the sampler reads it 100 times a second from a
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
	if c.Fill == FillSourceSampler {
		return FillSourceSampler
	}
	return FillSourceKernel
}
