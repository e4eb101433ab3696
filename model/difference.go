package model

import (
	"encoding/json"
	"math"
	"strings"

	"nbdscope/stats"
	"nbdscope/units"
)

// Difference is the verdict "within noise" of one compared figure, b
// against a (stats.Welch: Welch's t-test, the ratio's 95% interval by
// Fieller's method): the one value that every output prints a ratio, its
// interval and its ≈ mark from. No printer judges noise itself.
type Difference struct{ stats.Verdict }

// DifferenceOf judges b against a.
func DifferenceOf(a, b stats.Summary) Difference { return Difference{stats.Welch(a, b)} }

// DifferenceAt judges b against a with the interval at conf: one look of
// several at the same growing measurements (stats.RepeatedConfidence),
// whose intervals together hold the truth at 95%.
func DifferenceAt(a, b stats.Summary, conf float64) Difference {
	return Difference{stats.WelchAt(a, b, conf)}
}

// HasData says both sides had a measurement: the ratio is known, judged
// or not.
func (d Difference) HasData() bool { return d.Kind != stats.NoData }

// Within says the difference is within noise: the interval holds 1.
func (d Difference) Within() bool { return d.Kind == stats.Within }

// Mark is "≈" when the difference is within noise, "" otherwise.
func (d Difference) Mark() string {
	if d.Within() {
		return "≈"
	}
	return ""
}

// Interval is the ratio's 95% interval, "[1.21–1.33]" ("[0–∞]" when a's
// mean is within noise of 0); "" when not judged.
func (d Difference) Interval() string {
	if !d.Known() || math.IsNaN(d.Lo) || math.IsNaN(d.Hi) {
		return ""
	}
	return "[" + ratioBound(d.Lo) + "–" + ratioBound(d.Hi) + "]"
}

// ratioBound is a bound of a ratio's interval as FormatRatio prints the
// ratio, without its x.
func ratioBound(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "∞"
	case r == 0:
		return "0"
	}
	return strings.TrimSuffix(units.FormatRatio(r), "x")
}

// Cell is the ratio with its mark and interval: "1.27x [1.21–1.33]",
// "0.0105x ≈ [0–∞]"; the bare ratio when not judged; n/a without one (a's
// mean is 0: no ratio, so no interval of it to mark).
func (d Difference) Cell() string {
	s := Figure(d.Ratio).Ratio()
	if s == NA {
		return s
	}
	if m := d.Mark(); m != "" {
		s += " " + m
	}
	if iv := d.Interval(); iv != "" {
		s += " " + iv
	}
	return s
}

// differenceJSON is a Difference as JSON keeps it: the kind by name, and
// null for a bound that is not known or not finite (ci_unbounded then
// says the upper bound is infinite).
type differenceJSON struct {
	Verdict     string `json:"verdict"` // within_noise, beyond_noise, too_few, no_data
	NA          int    `json:"n_a"`
	NB          int    `json:"n_b"`
	Ratio       Figure `json:"ratio"`
	Low         Figure `json:"ci_low"`
	High        Figure `json:"ci_high"`
	Unbounded   bool   `json:"ci_unbounded,omitempty"`
	P           Figure `json:"p"`
	DF          Figure `json:"df"`
	RepeatsTell int    `json:"repeats_to_tell,omitempty"` // -1: none up to stats.TellMax would
	// Confidence is the interval's level where it is not stats.Confidence
	// (95%): a look's, in a sequence of looks (DifferenceAt).
	Confidence float64 `json:"confidence,omitempty"`
}

// verdictNames are the kinds' names in JSON.
var verdictNames = map[stats.Kind]string{stats.NoData: "no_data", stats.TooFew: "too_few", stats.Within: "within_noise", stats.Beyond: "beyond_noise"}

// MarshalJSON writes the verdict with its kind's name.
func (d Difference) MarshalJSON() ([]byte, error) {
	j := differenceJSON{Verdict: verdictNames[d.Kind], NA: d.NA, NB: d.NB, Ratio: Figure(d.Ratio),
		Low: Figure(d.Lo), High: Figure(d.Hi), Unbounded: math.IsInf(d.Hi, 1), P: Figure(d.P), DF: Figure(d.DF), RepeatsTell: d.Tell}
	if d.Confidence != 0 && d.Confidence != stats.Confidence {
		j.Confidence = d.Confidence
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (d *Difference) UnmarshalJSON(b []byte) error {
	var j differenceJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	v := stats.Verdict{NA: j.NA, NB: j.NB, Ratio: float64(j.Ratio), Lo: float64(j.Low), Hi: float64(j.High),
		P: float64(j.P), DF: float64(j.DF), T: math.NaN(), Tell: j.RepeatsTell, Confidence: stats.Confidence}
	if j.Confidence != 0 {
		v.Confidence = j.Confidence
	}
	if j.Unbounded {
		v.Hi = math.Inf(1)
	}
	for k, name := range verdictNames {
		if name == j.Verdict {
			v.Kind = k
		}
	}
	*d = Difference{v}
	return nil
}
