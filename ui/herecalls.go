package ui

import (
	"fmt"
	"strings"

	"nbdscope/model"
	"nbdscope/units"
)

// The "here" line of the help's calls/2MiB entry: beside the qemu series'
// figures, this machine's own, as the live run measures them: each side's
// receive calls per 2 MiB and its send buffer's fill over its recent
// samples (the last 2 s of unchanged settings), at the buffer it has now.
// Until a side has measured anything the line says where the figures will
// be (hereCalls).

// hereMeasured is the help's "here" text from the panels' recent figures,
// "" when neither side has measured yet.
func (m *Model) hereMeasured() string {
	var parts []string
	for i := range m.panels {
		if s := m.panels[i].hereFigures(); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + ": this machine's, measured now over each side's last 2 s" +
		" (g puts A at macOS's 8k and B at 2m; 'nbdscope sweep' measures each size in turn)"
}

// hereFigures is one side's part: "10.2 at 208k (A, buffer full 97% /
// empty 1%)", "" before its first active sample.
func (p *panel) hereFigures() string {
	r := p.recentOurs()
	if r == nil || r.Bytes == 0 || !r.ReceiverCallsPer2MiB().Known() {
		return ""
	}
	s := fmt.Sprintf("%s at %s (%s", r.ReceiverCallsPer2MiB().Fixed(1), senderBuf(*r), p.cfg.Name)
	if fl := r.Fill(); fl.Known() {
		s += fmt.Sprintf(", buffer full %s%% / empty %s%%", fl.FullPct.Fixed(0), fl.EmptyPct.Fixed(0))
	} else {
		s += ", fill n/a"
	}
	return s + ")"
}

// senderBuf is the bulk sender's send buffer as the kernel gave it (the
// server's for reads, the client's for writes), or as requested when it
// was not read back.
func senderBuf(f model.Figures) string {
	eff, req := f.SndBuf.ServerEffective, f.Settings.SndBuf
	if f.Direction() == model.FlowWrite {
		eff, req = f.SndBuf.ClientEffective, f.Settings.ClientSndBuf
	}
	if eff > 0 {
		return units.FormatSize(int64(eff))
	}
	return req
}

// figureEntries are the help's figures with the "here" line measured, when
// a side has measured.
func (m *Model) figureEntries() [][2]string {
	entries := helpEntries()
	here := m.hereMeasured()
	if here == "" {
		return entries
	}
	for i := range entries {
		if entries[i][0] == hereLabel {
			entries[i][1] = here
		}
	}
	return entries
}
