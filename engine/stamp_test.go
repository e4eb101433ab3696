package engine

import (
	"testing"

	"nbdscope/model"
)

// Every setting that can change while the load runs is carried by the
// stamp, so that a change of it starts a new segment (a stretch whose
// figures mix two settings would be labelled by one), and Stamp.Text reads
// it back in the settings table's text form. A setting added to the table
// without its stamp field fails here.
func TestStampCarriesEveryLiveSideSetting(t *testing.T) {
	sc := model.DefaultSide("A")
	sc.Workload, sc.ReadPercent = model.WorkMixed, 30
	sc.SndBuf, sc.ClientRcvBuf = model.Buf{Kind: model.BufMacOS}, model.Buf{Kind: model.BufSize, Bytes: 256 << 10}
	sc.HashThreads, sc.Transport, sc.Placement = 3, "tcp", model.PlaceShared
	sc.Exec = "qemu-img convert {uri} /dev/null"
	st := model.StampOf(sc)
	for _, s := range model.Settings() {
		got, carried := st.Text(s.Name)
		live := s.Live() && s.InSideConfig()
		if carried != live {
			t.Errorf("%s: carried by the stamp %v, but live side setting %v", s.Name, carried, live)
			continue
		}
		if carried && got != sc.Get(s.Name) {
			t.Errorf("%s: the stamp reads %q, the configuration %q", s.Name, got, sc.Get(s.Name))
		}
	}
	// A change of each starts a new stamp.
	for _, name := range []string{model.SetHashThreads, model.SetExec} {
		other := sc
		if err := other.Set(name, map[string]string{model.SetHashThreads: "auto", model.SetExec: ""}[name]); err != nil {
			t.Fatal(err)
		}
		if model.StampOf(other) == st {
			t.Errorf("a change of %s keeps the stamp: it would not start a segment", name)
		}
	}
	// The read share is a mixed workload's only.
	sc.Workload = model.WorkRead
	if v, ok := model.StampOf(sc).Text(model.SetReadPercent); !ok || v != "" {
		t.Errorf("read-percent of a read workload: %q, %v; want \"\", true", v, ok)
	}
}
