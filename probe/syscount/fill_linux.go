package syscount

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// FillMeter measures the send-buffer fill of groups of sender sockets in
// the kernel (fillprog_linux.go), where the sampler (probe/sockdiag)
// reads it from user space 200 times a second. It is safe for
// concurrent use.
type FillMeter struct {
	mu    sync.Mutex
	maps  fillMaps
	hooks []hook
	// groups: per group, per sender inode, the sums read at the last
	// Take (the window's base).
	groups map[string]map[uint64]fillSums
}

// fillSums are a socket's sums at one instant.
type fillSums struct {
	total, bytes, full, empty, events float64
}

func (s fillSums) minus(o fillSums) fillSums {
	return fillSums{s.total - o.total, s.bytes - o.bytes, s.full - o.full, s.empty - o.empty, s.events - o.events}
}

// fillWatchMax is how many sender sockets can be watched at once.
const fillWatchMax = 1024

// OpenFillMeter loads the fill programs and attaches them. An error
// says why they cannot run here (no BPF rights, no kernel BTF, a kernel
// before 6.6 without the socket layer's tracepoints, a refusal by the verifier, whose log VerifierLog gives);
// the sampler then measures.
func OpenFillMeter() (*FillMeter, error) {
	tp, err := loadTracepoints()
	if err != nil {
		return nil, err
	}
	o, err := loadFillOffsets()
	if err != nil {
		return nil, err
	}
	m := &FillMeter{groups: map[string]map[uint64]fillSums{}}
	if err := m.load(tp.dir, o); err != nil {
		m.Close()
		return nil, err
	}
	if err := m.selfCheck(); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// load makes the maps and attaches the three programs.
func (m *FillMeter) load(dir string, o fillOffsets) error {
	var err error
	if m.maps.watch, err = newMap("nbdscope_fill", ebpf.Hash, 8, fillStatsSize, fillWatchMax); err != nil {
		return refusal(err)
	}
	if m.maps.sks, err = newMap("nbdscope_fillsk", ebpf.LRUHash, 8, 8, 4*fillWatchMax); err != nil {
		return err
	}
	for _, p := range fillHooks {
		if err := m.attach(dir, o, p); err != nil {
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

// attach loads a fill program and hangs it on its tracepoint: raw
// (BPF_RAW_TRACEPOINT_OPEN, Linux 4.17+), where the program gets the
// tracepoint's arguments as they are, or else through a perf event,
// which first writes the tracepoint's record (its fields) at every
// call. With the sched_switch program gone besides, a watched socket's
// call cost 600-740 ns more where it cost 700-880 (BenchmarkFillCost,
// same runs; bench/README).
func (m *FillMeter) attach(dir string, o fillOffsets, p fillHook) error {
	prog, err := loadProgramType(p.name, ebpf.RawTracepoint, p.program(o, fillRecord{family: noFamily}, m.maps))
	if err == nil && !fillPerfOnly {
		l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: p.event, Program: prog})
		if err == nil {
			m.hooks = append(m.hooks, hook{prog: prog, link: l, event: -1})
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
	if prog, err = loadProgram(p.name, p.program(o, rec, m.maps)); err != nil {
		return refusal(err)
	}
	h, err := attachProgram(id, p.name, prog)
	m.hooks = append(m.hooks, h)
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

// Close detaches the programs and frees the maps.
func (m *FillMeter) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
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

// Set makes inodes (sender sockets) the group's; a socket new to it is
// measured from its next call on.
func (m *FillMeter) Set(group string, inodes []uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.groups[group]
	if g == nil {
		g = map[uint64]fillSums{}
		m.groups[group] = g
	}
	want := map[uint64]bool{}
	var err error
	for _, ino := range inodes {
		want[ino] = true
		if _, ok := g[ino]; ok {
			continue
		}
		if e := m.maps.watch.Update(ino, fillStats{}, ebpf.UpdateNoExist); e != nil && !errors.Is(e, ebpf.ErrKeyExist) {
			err = fmt.Errorf("watching socket inode %d: %w", ino, e)
			continue
		}
		g[ino] = fillSums{}
	}
	for ino := range g {
		if !want[ino] {
			delete(g, ino)
			m.unwatch(ino)
		}
	}
	return err
}

// unwatch takes ino out of the map unless another group holds it.
func (m *FillMeter) unwatch(ino uint64) {
	for _, g := range m.groups {
		if _, ok := g[ino]; ok {
			return
		}
	}
	m.maps.watch.Delete(ino)
}

// Take is the group's fill since its last Take (or since each socket
// joined it).
func (m *FillMeter) Take(group string) FillWindow {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := monotonicNS()
	var w FillWindow
	var sum fillSums
	var last float64
	for ino, base := range m.groups[group] {
		var st fillStats
		if m.maps.watch.Lookup(ino, &st) != nil {
			continue
		}
		cur := sumsAt(st, now)
		sum = addSums(sum, cur.minus(base))
		m.groups[group][ino] = cur
		w.Sockets++
		last += float64(st.LastLevel >> 32)
		w.Limit = max(w.Limit, int64(st.LastLevel&0xffffffff))
	}
	return w.from(sum, last)
}

func addSums(a, b fillSums) fillSums {
	return fillSums{a.total + b.total, a.bytes + b.bytes, a.full + b.full, a.empty + b.empty, a.events + b.events}
}

// sumsAt are st's sums with the level of its last call held until now:
// a blocked sender makes no call, and its time counts all the same.
func sumsAt(st fillStats, now uint64) fillSums {
	s := fillSums{float64(st.TotalNS), float64(st.BytesNS), float64(st.FullNS), float64(st.EmptyNS), float64(st.Events)}
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

// from fills w's figures from the window's sums and the summed last
// levels.
func (w FillWindow) from(s fillSums, last float64) FillWindow {
	w.Events = uint64(s.events)
	if s.total <= 0 {
		return w
	}
	w.Seconds = s.total / 1e9
	w.FullPct, w.EmptyPct = 100*s.full/s.total, 100*s.empty/s.total
	w.MeanBytes = s.bytes / s.total
	if w.Sockets > 0 {
		w.LastBytes = last / float64(w.Sockets)
	}
	return w
}

func monotonicNS() uint64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

// selfCheck watches the sender of a socketpair with nothing read: the
// level the program read must be what the kernel says of it (SIOCOUTQ,
// sk_wmem_alloc less one) and the limit SO_SNDBUF. It catches offsets
// that BTF gave but the program reads wrong.
func (m *FillMeter) selfCheck() error {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("the fill program's self-check: %w", err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	var st unix.Stat_t
	if err := unix.Fstat(pair[0], &st); err != nil {
		return fmt.Errorf("the fill program's self-check: %w", err)
	}
	const group = "\x00self-check"
	defer func() { m.Set(group, nil); delete(m.groups, group) }()
	if err := m.Set(group, []uint64{st.Ino}); err != nil {
		return err
	}
	unix.Write(pair[0], make([]byte, 1000))
	outq, _ := unix.IoctlGetInt(pair[0], unix.TIOCOUTQ)
	sndbuf, _ := unix.GetsockoptInt(pair[0], unix.SOL_SOCKET, unix.SO_SNDBUF)
	var fs fillStats
	if err := m.maps.watch.Lookup(st.Ino, &fs); err != nil {
		return fmt.Errorf("the fill program's self-check: %w", err)
	}
	got := [2]int{int(fs.LastLevel >> 32), int(fs.LastLevel & 0xffffffff)}
	if got != [2]int{outq, sndbuf} {
		return fmt.Errorf("the fill program read %d bytes in flight against a limit of %d, the kernel says %d and %d", got[0], got[1], outq, sndbuf)
	}
	return nil
}
