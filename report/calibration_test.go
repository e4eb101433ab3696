package report

import (
	"bytes"
	"strings"
	"testing"

	"nbdscope/model"
)

// TestCalibrationSaysAgreement: calibrate's last line names the buffers
// at which our receive calls per 2 MiB are within 0.75–1.33x of the real
// client's, those outside, and those where the real client's calls were
// not counted; the header names the reader.
func TestCalibrationSaysAgreement(t *testing.T) {
	row := func(buf string, ratio model.Figure) model.CalibrationRow {
		return model.CalibrationRow{Buffer: buf, Ratio: model.ClientRatios{RecvCallsPer2MiB: ratio}}
	}
	rep := model.CalibrationReport{Config: model.Config{Sides: [2]model.SideConfig{{Connections: 1, RequestSize: 2 << 20, InFlight: 8,
		Reader: model.ReaderNetpoller}}},
		Client: "qemu-img convert {uri} null", Repeat: 3,
		Rows: []model.CalibrationRow{row("default", 1.47), row("2m", 1.03), row("4m", 0.74), row("8m", model.Unknown)}}
	var out bytes.Buffer
	WriteCalibration(&out, rep)
	for _, want := range []string{
		"reader netpoller)",
		"Agreement, receive calls per 2 MiB ours / qemu-img within 0.75–1.33x: within at 2m 1.03x; OUTSIDE at default 1.47x, 4m 0.74x; n/a at 8m (the real client's calls were not counted).",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the calibration lacks %q:\n%s", want, out.String())
		}
	}
}
