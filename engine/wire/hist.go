package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Hist is a load's latency buckets (model.Histogram.Snapshot), sent
// sparse: the count of buckets and the non-zero ones as index, value
// pairs, {"n":320,"nz":[i,v,i,v,…]}. The dense array was 320 numbers in
// every poll reply, most of them 0, and decoding them was two thirds of
// what a poll cost the controller; a run's requests fill a few dozen
// buckets. A dense array is still read.
type Hist []uint64

// maxHistBuckets bounds the buckets a reply may claim, so that a bad one
// cannot make the controller allocate without limit.
const maxHistBuckets = 1 << 16

type sparseHist struct {
	N  int      `json:"n"`
	NZ []uint64 `json:"nz,omitempty"`
}

// MarshalJSON writes h sparse.
func (h Hist) MarshalJSON() ([]byte, error) {
	s := sparseHist{N: len(h)}
	for i, v := range h {
		if v != 0 {
			s.NZ = append(s.NZ, uint64(i), v)
		}
	}
	return json.Marshal(s)
}

// UnmarshalJSON reads h sparse, or as a dense array.
func (h *Hist) UnmarshalJSON(data []byte) error {
	if d := bytes.TrimSpace(data); len(d) > 0 && d[0] != '{' {
		var dense []uint64
		if err := json.Unmarshal(d, &dense); err != nil {
			return err
		}
		*h = dense
		return nil
	}
	var s sparseHist
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	if s.N < 0 || s.N > maxHistBuckets || len(s.NZ)%2 != 0 {
		return fmt.Errorf("latency buckets: %d buckets, %d numbers of pairs", s.N, len(s.NZ))
	}
	out := make(Hist, s.N)
	for k := 0; k < len(s.NZ); k += 2 {
		i := s.NZ[k]
		if i >= uint64(s.N) {
			return fmt.Errorf("latency bucket %d of %d", i, s.N)
		}
		out[i] = s.NZ[k+1]
	}
	*h = out
	return nil
}
