package phrase

import "nbdscope/model"

// What measured a side's or a run's send-buffer fill (model.FillSource…),
// and, when sampled where the kernel was asked, why (model.FillSampled…):
// the short form beside the explorer's fill row, the long form in a
// report's line.

// FillSourceShort is the panel's words: "kernel", "sampled: TCP"; ""
// when the source is not known.
func FillSourceShort(source, why string) string {
	switch source {
	case model.FillSourceKernel:
		return "kernel"
	case model.FillSourceEvents:
		return "kernel events"
	case model.FillSourceSampler:
		if w := fillSampledShort[why]; w != "" {
			return "sampled: " + w
		}
		return "sampled"
	}
	return ""
}

var fillSampledShort = map[string]string{
	model.FillSampledAsked: "asked",
	model.FillSampledTCP:   "TCP",
	model.FillSampledNoBPF: "no BPF",
}

// FillSourceLong is a report's words: "measured in the kernel", "sampled
// from user space"; "" when the source is not known.
func FillSourceLong(source string) string {
	switch source {
	case model.FillSourceKernel:
		return "measured in the kernel"
	case model.FillSourceEvents:
		return "measured in the kernel at every change"
	case model.FillSourceSampler:
		return "sampled from user space"
	}
	return ""
}

// FillSourceTiny is the one letter of the explorer's narrow fill row
// ("fill k"): k kernel, e the kernel's exact programs (kernel-events), s
// sampled, as its help says; "" when not known.
func FillSourceTiny(source string) string {
	switch source {
	case model.FillSourceKernel:
		return "k"
	case model.FillSourceEvents:
		return "e"
	case model.FillSourceSampler:
		return "s"
	}
	return ""
}
