package model

// FillSource is the fill source the run asked for: the sampler unless the
// kernel was asked for. The sampler is the default because the kernel's
// programs, where they load, read a small buffer's full % 3.5 to 13 points
// low (a buffer is charged before it is queued, and no tracepoint marks
// the charge) and add 0.2 to 0.7 µs to every socket call on the machine
// while loaded, the measured pair's included: a measurement that moves
// what it measures is opt-in (bench/README, "Send-buffer fill in the
// kernel").
func (c Config) FillSource() string {
	if c.Fill == FillSourceKernel {
		return FillSourceKernel
	}
	return FillSourceSampler
}
