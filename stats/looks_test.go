package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Pocock's constants are what they claim: over K looks at equal steps of
// a sum of independent standard normal steps, the largest |z| of the
// looks passes c_K in 5% of sequences. With 1.96 at every look it passes
// far more often, which is why the looks need them.
func TestPocockConstantsHoldTheLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const seqs = 40000
	for k := 2; k <= MaxLooks; k++ {
		passC, pass196 := 0, 0
		for range seqs {
			sum, maxZ := 0.0, 0.0
			for j := 1; j <= k; j++ {
				sum += rng.NormFloat64()
				maxZ = math.Max(maxZ, math.Abs(sum)/math.Sqrt(float64(j)))
			}
			if maxZ > pocock[k-1] {
				passC++
			}
			if maxZ > 1.96 {
				pass196++
			}
		}
		got := float64(passC) / seqs
		if math.Abs(got-0.05) > 0.006 {
			t.Errorf("%d looks: |z| passed Pocock's %.3f in %.4f of sequences, want 0.05", k, pocock[k-1], got)
		}
		if naive := float64(pass196) / seqs; naive < 0.07 {
			t.Errorf("%d looks at 1.96: passed in %.4f of sequences; the looks should cost more than 5%%", k, naive)
		}
	}
}

// The intervals a calibration takes at its looks hold the true ratio in
// 95% of sequences of noisy measurements, whenever one stops: five looks
// at 10, 20 … 50 repeats of two sides whose means are 10 and 12 (a
// spread of 30%, as calibrate's calls swing). A 95% interval at every
// look would miss it in about one sequence in seven.
func TestRepeatedIntervalsHoldTheRatio(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const seqs, looks, step = 2000, 5, 10
	const truth = 1.2
	missRepeated, missNaive := 0, 0
	for range seqs {
		var a, b []float64
		mr, mn := false, false
		for l := 1; l <= looks; l++ {
			for range step {
				a = append(a, 10+3*rng.NormFloat64())
				b = append(b, 12+3.6*rng.NormFloat64())
			}
			if v := WelchAt(Of(a), Of(b), RepeatedConfidence(looks)); v.Lo > truth || v.Hi < truth {
				mr = true
			}
			if v := Welch(Of(a), Of(b)); v.Lo > truth || v.Hi < truth {
				mn = true
			}
		}
		if mr {
			missRepeated++
		}
		if mn {
			missNaive++
		}
	}
	t.Logf("missed: %.3f repeated, %.3f naive", float64(missRepeated)/seqs, float64(missNaive)/seqs)
	if got := float64(missRepeated) / seqs; got > 0.065 {
		t.Errorf("repeated intervals missed the ratio in %.3f of sequences, want at most 0.05 (+ the simulation's noise)", got)
	}
	if got := float64(missNaive) / seqs; got < 0.09 {
		t.Errorf("a 95%% interval at each look missed in only %.3f of sequences: the test does not show what the looks cost", got)
	}
}

func TestRepeatedConfidence(t *testing.T) {
	if got := RepeatedConfidence(1); got != Confidence {
		t.Errorf("one look: %v, want %v", got, Confidence)
	}
	if got := RepeatedConfidence(5); math.Abs(got-0.9842) > 0.0005 {
		t.Errorf("five looks: %v, want 0.9842", got)
	}
	for _, k := range []int{0, -1, MaxLooks + 1} {
		if got := RepeatedConfidence(k); got != Confidence {
			t.Errorf("%d looks: %v, want the plain level %v", k, got, Confidence)
		}
	}
	a, b := Of([]float64{10, 11, 9, 10.5, 9.5}), Of([]float64{12, 13, 11, 12.5, 11.5})
	plain, wide := Welch(a, b), WelchAt(a, b, RepeatedConfidence(5))
	if !(wide.Lo < plain.Lo && wide.Hi > plain.Hi) || wide.Confidence != RepeatedConfidence(5) || plain.Confidence != Confidence {
		t.Errorf("a look's interval %v–%v (%v) should hold the plain one %v–%v (%v)", wide.Lo, wide.Hi, wide.Confidence, plain.Lo, plain.Hi, plain.Confidence)
	}
}
