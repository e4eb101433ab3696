package syscount

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// fillEventsMeter measures fill exactly, at every change of a watched unix
// sender's level (fillprog_linux.go): a program at each skb charged and
// freed, about 600 ns a run, so its cost grows with the bytes moved (a
// 2 MiB buffer holds about 58 skbs). It is the opt-in source (--fill-source
// kernel-events); the timer (filltimer_linux.go) is the default.
type fillEventsMeter struct {
	maps  fillMaps
	hooks []hook
}

// fillWatchMax is how many sender sockets can be watched at once.
const fillWatchMax = 1024

// OpenFillEvents loads the exact per-event fill programs and attaches
// them; an error says why they cannot run here, as OpenFillMeter's.
func OpenFillEvents() (*FillMeter, error) {
	dir, o, err := fillGround()
	if err != nil {
		return nil, err
	}
	e := &fillEventsMeter{}
	if err := e.load(dir, o); err != nil {
		e.close()
		return nil, err
	}
	return openMeter(e)
}

// load makes the maps and attaches the three programs.
func (m *fillEventsMeter) load(dir string, o fillOffsets) error {
	var err error
	if m.maps.watch, err = newMap("nbdscope_fill", ebpf.Hash, 8, fillStatsSize, fillWatchMax); err != nil {
		return refusal(err)
	}
	if m.maps.sks, err = newMap("nbdscope_fillsk", ebpf.LRUHash, 8, 8, 4*fillWatchMax); err != nil {
		return err
	}
	for _, p := range fillHooks {
		build := func(rec fillRecord) *builder { return p.program(o, rec, m.maps) }
		if err := attachFillHook(&m.hooks, dir, p, build); err != nil {
			return err
		}
	}
	return nil
}

// fillHook is a fill program and its tracepoint, with the field of its
// record that holds the socket (or skb).
type fillHook struct {
	group, event, field, name string
	program                   func(fillOffsets, fillRecord, fillMaps) *builder
}

// fillPerfOnly makes attach use perf events only (a test of that path).
var fillPerfOnly = false

var fillHooks = []fillHook{
	{"sock", "sock_send_length", "sk", "fill_send", fillSendProgram},
	{"sock", "sk_data_ready", "skaddr", "fill_queued", fillQueuedProgram},
	{"skb", "consume_skb", "skbaddr", "fill_release", fillReleaseProgram},
}

// readFillRecord reads where the tracepoint's record holds the socket
// (or skb) and, for the sock group's, its family.
func readFillRecord(dir, group, event, sk string) (fillRecord, error) {
	var rec fillRecord
	var err error
	if rec.sk, err = fieldOffset(dir, group, event, sk); err != nil {
		return rec, fmt.Errorf("the tracepoint %s:%s (sock:sk_data_ready: Linux 6.6+): %w", group, event, err)
	}
	if group == "sock" {
		rec.family, err = fieldOffsetAligned(dir, group, event, "family", 2)
	}
	return rec, err
}

// attachFillHook loads a fill program and hangs it on its tracepoint,
// into hooks: raw (BPF_RAW_TRACEPOINT_OPEN, Linux 4.17+), where the
// program gets the tracepoint's arguments as they are, or else through a
// perf event, which first writes the tracepoint's record (its fields) at
// every call. With the sched_switch program gone besides, a watched
// socket's call cost 600-740 ns more where it cost 700-880
// (BenchmarkFillCost, same runs; bench/README). build makes the program
// for a record (raw: the socket first, no family).
func attachFillHook(hooks *[]hook, dir string, p fillHook, build func(fillRecord) *builder) error {
	prog, err := loadProgramType(p.name, ebpf.RawTracepoint, build(fillRecord{family: noFamily}))
	if err == nil && !fillPerfOnly {
		l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: p.event, Program: prog})
		if err == nil {
			*hooks = append(*hooks, hook{prog: prog, link: l, event: -1})
			return nil
		}
		prog.Close()
	}
	rec, err := readFillRecord(dir, p.group, p.event, p.field)
	if err != nil {
		return err
	}
	id, err := readEventID(dir, p.group, p.event)
	if err != nil {
		return fmt.Errorf("the tracepoint %s:%s: %w", p.group, p.event, err)
	}
	if prog, err = loadProgram(p.name, build(rec)); err != nil {
		return refusal(err)
	}
	h, err := attachProgram(id, p.name, prog)
	*hooks = append(*hooks, h)
	return err
}

// refusal is err with the fix for missing rights first, where that is
// why, and err itself kept (its verifier log).
func refusal(err error) error {
	if why := bpfRefusal(err); why != err.Error() {
		return fmt.Errorf("%s: %w", why, err)
	}
	return err
}

// close detaches the programs and frees the maps.
func (m *fillEventsMeter) close() {
	for _, h := range m.hooks {
		h.close()
	}
	m.hooks = nil
	for _, bm := range []*ebpf.Map{m.maps.watch, m.maps.sks} {
		if bm != nil {
			bm.Close()
		}
	}
}

// watch starts measuring ino from its next call.
func (m *fillEventsMeter) watch(ino uint64) error {
	if err := m.maps.watch.Update(ino, fillStats{}, ebpf.UpdateNoExist); err != nil && !errors.Is(err, ebpf.ErrKeyExist) {
		return err
	}
	return nil
}

func (m *fillEventsMeter) unwatch(ino uint64) { m.maps.watch.Delete(ino) }

// read is ino's sums now, and the level of its last change.
func (m *fillEventsMeter) read(ino, now uint64) (fillSums, uint64, bool) {
	var st fillStats
	if m.maps.watch.Lookup(ino, &st) != nil {
		return fillSums{}, 0, false
	}
	return sumsAt(st, now), st.LastLevel, true
}

// sumsAt are st's sums with the level of its last call held until now:
// a blocked sender makes no call, and its time counts all the same.
func sumsAt(st fillStats, now uint64) fillSums {
	s := fillSums{total: float64(st.TotalNS), bytes: float64(st.BytesNS), full: float64(st.FullNS), empty: float64(st.EmptyNS), events: float64(st.Events)}
	if st.LastNS == 0 || now <= st.LastNS {
		return s
	}
	dt := float64(now - st.LastNS)
	bytes, limit := st.LastLevel>>32, st.LastLevel&0xffffffff
	s.total += dt
	s.bytes += float64(bytes) * dt
	if limit > 0 && bytes*10 >= limit*fillFullTenths {
		s.full += dt
	}
	if limit > 0 && bytes*10 < limit*fillEmptyTenths {
		s.empty += dt
	}
	return s
}
