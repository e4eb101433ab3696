package stats

import "gonum.org/v1/gonum/stat/distuv"

// Looking at a comparison again as measurements accumulate, and stopping
// once its interval answers, would answer wrongly more often than the
// interval's level says: each look is another chance for the noise to
// land the interval where the truth is not. Repeated confidence
// intervals (Jennison and Turnbull, "Group Sequential Methods", 2000,
// ch. 9) keep the promise: with K looks planned at equal steps, each look's
// interval is taken at Pocock's constant c_K in place of 1.96, and the K
// intervals together hold the truth at 95%, whenever one stops. So a
// verdict read at any look is as sure as one 95% interval at a number of
// measurements fixed in advance.

// pocock are Pocock's constants for a two-sided 5% level and K = 1…10
// looks at equal steps (Jennison and Turnbull, Table 2.1).
// TestPocockConstantsHoldTheLevel checks them by simulation.
var pocock = [...]float64{1.960, 2.178, 2.289, 2.361, 2.413, 2.453, 2.485, 2.512, 2.535, 2.555}

// MaxLooks is the most looks a plan may take.
const MaxLooks = len(pocock)

// RepeatedConfidence is the level of each look's interval when a
// comparison is looked at looks times, at equal steps, so that the looks'
// intervals together hold the truth at Confidence: 0.95 for one look,
// 0.9842 for five, 0.9894 for ten (the constants are for a 95% family).
// It is Confidence for a count outside 1…MaxLooks.
func RepeatedConfidence(looks int) float64 {
	if looks <= 1 || looks > MaxLooks { // one look is the plain interval, exactly
		return Confidence
	}
	c := pocock[looks-1]
	return 1 - 2*distuv.UnitNormal.Survival(c)
}
