package stats

import (
	"encoding/json"
	"math"
	"testing"
)

func TestOfLikeHyperfine(t *testing.T) {
	s := Of([]float64{1.2, 1.0, 1.1, math.NaN()})
	if s.N != 3 || s.Min != 1.0 || s.Max != 1.2 || s.Median != 1.1 || math.Abs(s.Mean-1.1) > 1e-12 {
		t.Fatalf("%+v", s)
	}
	if math.Abs(s.Stddev-0.1) > 1e-12 { // sample σ (n−1) of 1.0, 1.1, 1.2
		t.Fatalf("σ = %v, want 0.1", s.Stddev)
	}
	if one := Of([]float64{2}); !math.IsNaN(one.Stddev) || one.Median != 2 {
		t.Fatalf("one measurement: %+v", one)
	}
	if none := Of(nil); none.N != 0 || !math.IsNaN(none.Mean) {
		t.Fatalf("none: %+v", none)
	}
	if even := Of([]float64{4, 1, 3, 2}); even.Median != 2.5 {
		t.Fatalf("median of 1..4 = %v", even.Median)
	}
}

func TestSummaryJSON(t *testing.T) {
	data, err := json.Marshal(Of([]float64{2}))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"n":1,"mean":2,"stddev":null,"median":2,"min":2,"max":2}` {
		t.Fatalf("one measurement: %s", data)
	}
	var back Summary
	if err := json.Unmarshal(data, &back); err != nil || back.N != 1 || back.Mean != 2 || !math.IsNaN(back.Stddev) {
		t.Fatalf("read back %+v (%v)", back, err)
	}
	if data, err := json.Marshal(Of(nil)); err != nil || string(data) != `{"n":0,"mean":null,"stddev":null,"median":null,"min":null,"max":null}` {
		t.Fatalf("none: %s %v", data, err)
	}
}
