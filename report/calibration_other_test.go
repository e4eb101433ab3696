package report

import (
	"bytes"
	"strings"
	"testing"

	"nbdscope/model"
)

// A calibration measured while other processes kept the machine busy
// says so under its table, as a sweep does: the two clients are slowed
// unevenly, so their ratio is not this machine's (it printed 13.50x
// ours / qemu-img at a load average of 16 without a word).
func TestCalibrationSaysOtherCPU(t *testing.T) {
	busy, quiet := model.Figure(1.5), model.Figure(0.05)
	rep := model.CalibrationReport{Config: model.Config{Sides: [2]model.SideConfig{{Connections: 1, RequestSize: 2 << 20, InFlight: 8}}},
		Client: "qemu-img convert {uri} null", Repeat: 1,
		Rows: []model.CalibrationRow{{Buffer: "default", OtherCoresBusy: &busy}, {Buffer: "2m", OtherCoresBusy: &quiet}}}
	var out bytes.Buffer
	WriteCalibration(&out, rep)
	if want := "▲ other processes kept up to 1.50 cores busy during the measurements of default: those rows are slowed by them"; !strings.Contains(out.String(), want) {
		t.Errorf("the calibration lacks %q:\n%s", want, out.String())
	}
}
