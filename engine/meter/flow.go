package meter

import "nbdscope/model"

// Which way each live sample's bulk data went (model.Flow): our load's is
// its workload's, but an interval in which the workload changed direction
// mixed the two receivers, and is marked so before anyone sees it; a real
// client's (an exec side) is the way its server saw it move its data.

// flows are the side's directions: of its last sample that moved
// payload, and of an exec side's client as last seen, for the command
// clientOf.
type flows struct {
	last     model.Flow
	client   model.Flow
	clientOf string
}

// NoteClient keeps which way the client of command exec moved its data
// since the last reading, as its server saw it (read: payload it sent,
// written: received), and returns its direction as last seen ("" before
// it moved any).
func (m *Meter) NoteClient(exec string, read, written uint64) model.Flow {
	if m.flow.clientOf != exec {
		m.flow.client, m.flow.clientOf = "", exec
	}
	if fl := model.FlowOfPayload(read, written); fl != "" {
		m.flow.client = fl
	}
	return m.flow.client
}

// ClientFlow is which way the client of command exec, the side's command
// now, was last seen moving its data; "" for our load (exec ""), or
// before the client moved any.
func (m *Meter) ClientFlow(exec string) model.Flow {
	if exec != "" && m.flow.clientOf == exec {
		return m.flow.client
	}
	return ""
}

// SettleFlow gives a sample about to be emitted its flow: a real
// client's data goes the way it moved it (exec: the side's command now),
// whatever the side's workload says; an interval across a change of
// direction is marked so. Samples are settled in order.
func (m *Meter) SettleFlow(smp *model.Sample, exec string) {
	if fl := m.ClientFlow(exec); fl != "" && smp.Settings.Exec == exec {
		smp.Flow = fl
		for _, f := range []*model.Figures{smp.Turn, smp.Recent} {
			if f != nil {
				f.Flow = fl
			}
		}
	}
	m.flow.last = smp.SettleFlow(m.flow.last)
}
