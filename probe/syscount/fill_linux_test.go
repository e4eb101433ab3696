package syscount

import "testing"

func TestFillMeterLoads(t *testing.T) {
	m, err := OpenFillMeter()
	if err != nil {
		t.Fatalf("%v\n%s", err, VerifierLog(err, 20))
	}
	m.Close()
}
