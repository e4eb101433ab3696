package stats

import (
	"encoding/json"
	"math"
)

// summaryJSON is a Summary's JSON form: lower-case names, as the rest of
// nbdscope's JSON, and null for a figure that is not known (NaN: no
// measurement, or σ of one), never 0 — encoding/json cannot write NaN.
type summaryJSON struct {
	N      int      `json:"n"`
	Mean   *float64 `json:"mean"`
	Stddev *float64 `json:"stddev"`
	Median *float64 `json:"median"`
	Min    *float64 `json:"min"`
	Max    *float64 `json:"max"`
}

// MarshalJSON writes {"n", "mean", "stddev", "median", "min", "max"},
// null where a figure is not known.
func (s Summary) MarshalJSON() ([]byte, error) {
	known := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(summaryJSON{N: s.N, Mean: known(s.Mean), Stddev: known(s.Stddev),
		Median: known(s.Median), Min: known(s.Min), Max: known(s.Max)})
}

// UnmarshalJSON reads what MarshalJSON wrote, null as NaN.
func (s *Summary) UnmarshalJSON(data []byte) error {
	var j summaryJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	val := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*s = Summary{N: j.N, Mean: val(j.Mean), Stddev: val(j.Stddev), Median: val(j.Median), Min: val(j.Min), Max: val(j.Max)}
	return nil
}
