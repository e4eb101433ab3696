package engine

import (
	"errors"
	"testing"
	"time"

	"nbdscope/model"
	"nbdscope/probe/syscount"
)

// TestFillSourceNamed: a run names what measured each side's fill, and
// measures it: the sampler unless the kernel is asked for (--fill-source kernel);
// asked, the kernel where its programs load here, the sampler where they
// cannot (made to fail for the test).
func TestFillSourceNamed(t *testing.T) {
	if rep := runUntilFill(t, ""); rep.Sides[0].FillSource != model.FillSourceSampler {
		t.Errorf("not asked: fill_source %q, want the sampler", rep.Sides[0].FillSource)
	}
	here := model.FillSourceKernel
	if k, err := syscount.OpenFillMeter(); err != nil {
		here = model.FillSourceSampler
		t.Logf("the kernel's fill programs cannot load here: %v", err)
	} else {
		k.Close()
	}
	for _, c := range []struct {
		refuse bool
		want   string
	}{{false, here}, {true, model.FillSourceSampler}} {
		if c.refuse {
			openKernelFill = func() (*syscount.FillMeter, error) { return nil, errors.New("refused for the test") }
		}
		rep := runUntilFill(t, model.FillSourceKernel)
		openKernelFill = syscount.OpenFillMeter
		if got := rep.Sides[0].FillSource; got != c.want {
			t.Errorf("programs refused %v: fill_source %q, want %q", c.refuse, got, c.want)
		}
		if !rep.Sides[0].Summary.Fill().Known() {
			t.Errorf("programs refused %v: side A's fill not measured", c.refuse)
		}
	}
}

// runUntilFill runs the test pair until side A has 5 samples with a
// fill (at most 30 s) and returns its report.
func runUntilFill(t *testing.T, source string) model.Report {
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
	return p.Report()
}
