package engine

import (
	"errors"
	"testing"
	"time"

	"nbdscope/model"
	"nbdscope/probe/syscount"
)

// TestFillSourceNamed: a run names what measured each side's fill, and
// measures it: by default the kernel's timer where its programs load
// here, and then no sampler runs (no 100 Hz timer in the controller); the
// kernel's exact programs when asked for (--fill-source kernel-events);
// the sampler where they cannot (made to fail for the test), or when it
// is asked for (--fill-source sampler).
func TestFillSourceNamed(t *testing.T) {
	here := func(source string) string {
		k, err := OpenKernelFill(source)
		if err != nil {
			t.Logf("the kernel's fill programs (%s) cannot load here: %v", source, err)
			return model.FillSourceSampler
		}
		k.Close()
		return source
	}
	for _, c := range []struct {
		source string
		refuse bool
		want   string
	}{{"", false, here(model.FillSourceKernel)}, {model.FillSourceEvents, false, here(model.FillSourceEvents)},
		{model.FillSourceKernel, true, model.FillSourceSampler}, {model.FillSourceSampler, false, model.FillSourceSampler}} {
		if c.refuse {
			openKernelFill = func(string) (*syscount.FillMeter, error) { return nil, errors.New("refused for the test") }
		}
		rep, sampled := runUntilFill(t, c.source)
		openKernelFill = OpenKernelFill
		if got := rep.Sides[0].FillSource; got != c.want {
			t.Errorf("asked %q, programs refused %v: fill_source %q, want %q", c.source, c.refuse, got, c.want)
		}
		fl := rep.Sides[0].Summary.Fill()
		if !fl.Known() {
			t.Errorf("asked %q, programs refused %v: side A's fill not measured", c.source, c.refuse)
		}
		// The figures say it too, with why sampled, for the explorer's
		// fill row.
		why := map[bool]string{true: model.FillSampledNoBPF, false: ""}[c.want == model.FillSourceSampler]
		if c.source == model.FillSourceSampler {
			why = model.FillSampledAsked
		}
		if fl.Source != c.want || fl.Sampled != why {
			t.Errorf("asked %q, programs refused %v: the figures' fill source %q (sampled: %q), want %q (%q)", c.source, c.refuse, fl.Source, fl.Sampled, c.want, why)
		}
		if sampled != (c.want == model.FillSourceSampler) {
			t.Errorf("asked %q, programs refused %v: the sampler ran %v, measuring in %s", c.source, c.refuse, sampled, c.want)
		}
	}
}

// runUntilFill runs the test pair until side A has 5 samples with a
// fill (at most 30 s) and returns its report, and whether the sampler
// ran.
func runUntilFill(t *testing.T, source string) (model.Report, bool) {
	t.Helper()
	cfg := testConfig()
	cfg.Fill = source
	p := startPair(t, cfg)
	n := 0
	deadline := time.After(30 * time.Second)
	for n < 5 {
		select {
		case u, ok := <-p.Updates():
			if !ok {
				t.Fatal("the pair ended before side A's fill was measured")
			}
			if s := u.Sample; s != nil && s.Side.Index() == 0 && s.Fill().Known() {
				n++
			}
		case <-deadline:
			t.Fatalf("side A had %d samples with a fill in 30 s", n)
		}
	}
	p.Stop()
	for range p.Updates() {
	}
	return p.Report(), p.fill.sampler() != nil
}
