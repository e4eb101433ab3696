package syscount

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/internal/testbin"
)

// openTimerMeter opens the default meter and its timer, or ends the test
// as testbin.Require says.
func openTimerMeter(t *testing.T) (*FillMeter, *fillTimer) {
	t.Helper()
	m, err := OpenFillMeter()
	if err != nil {
		testbin.Require(t, fmt.Errorf("the fill timer cannot load here: %w\n%s", err, VerifierLog(err, 20)))
		t.SkipNow()
	}
	t.Cleanup(m.Close)
	return m, m.back.(*fillTimer)
}

// socketPair is a nonblocking unix stream socketpair with its sender's
// inode; closed at the test's end.
func socketPair(t *testing.T) ([2]int, uint64) {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(pair[0]); unix.Close(pair[1]) })
	var st unix.Stat_t
	if err := unix.Fstat(pair[0], &st); err != nil {
		t.Fatal(err)
	}
	return pair, st.Ino
}

// takeSamples adds the group's windows until they hold n samples (at
// most 2 s), as time-weighted shares.
func takeSamples(m *FillMeter, group string, n uint64) FillWindow {
	var sum FillWindow
	for deadline := time.Now().Add(2 * time.Second); sum.Samples < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		w := m.Take(group)
		if !w.OK() {
			continue
		}
		tot := sum.Seconds + w.Seconds
		mix := func(a, b float64) float64 { return (a*sum.Seconds + b*w.Seconds) / tot }
		sum.FullPct, sum.EmptyPct, sum.MeanBytes = mix(sum.FullPct, w.FullPct), mix(sum.EmptyPct, w.EmptyPct), mix(sum.MeanBytes, w.MeanBytes)
		sum.Seconds, sum.Samples, sum.Limit = tot, sum.Samples+w.Samples, w.Limit
	}
	return sum
}

// TestFillTimerReadsItsSocket: two senders, one with its buffer full
// (written until EAGAIN, nothing read) and one holding 100 bytes, each in
// its own group: each group's samples are its own socket's level, what
// SIOCOUTQ and SO_SNDBUF say of it, full 100% and empty 100%. A tick that
// read the other slot's socket, or none, fails it; and once the full
// sender is closed, its slot takes no more samples (the address is
// another's, or none's, from then on).
func TestFillTimerReadsItsSocket(t *testing.T) {
	m, _ := openTimerMeter(t)
	full, fullIno := socketPair(t)
	low, lowIno := socketPair(t)
	if err := m.Set("full", []uint64{fullIno}); err != nil {
		t.Fatal(err)
	}
	if err := m.Set("low", []uint64{lowIno}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for range 10000 {
		if _, err := unix.Write(full[0], buf); errors.Is(err, unix.EAGAIN) {
			break
		}
	}
	unix.Write(low[0], buf[:100])
	m.Take("full") // the ticks while they filled are not the levels to check
	m.Take("low")
	for _, c := range []struct {
		group     string
		fd        int
		full, emp float64
	}{{"full", full[0], 100, 0}, {"low", low[0], 0, 100}} {
		outq, _ := unix.IoctlGetInt(c.fd, unix.TIOCOUTQ)
		sndbuf, _ := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
		w := takeSamples(m, c.group, 200)
		t.Logf("%s: %+v (SIOCOUTQ %d, SO_SNDBUF %d)", c.group, w, outq, sndbuf)
		if w.Samples < 200 {
			t.Fatalf("%s: %d samples in 2 s, want 200 (the timer ticks 1000 times a second)", c.group, w.Samples)
		}
		near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
		if !near(w.FullPct, c.full) || !near(w.EmptyPct, c.emp) || !near(w.MeanBytes, float64(outq)) || w.Limit != int64(sndbuf) {
			t.Errorf("%s: full %.1f%% empty %.1f%% mean %.0f B of %d, want %.0f%%, %.0f%%, %d of %d", c.group, w.FullPct, w.EmptyPct, w.MeanBytes, w.Limit, c.full, c.emp, outq, sndbuf)
		}
	}
	unix.Close(full[0])
	time.Sleep(20 * time.Millisecond)
	m.Take("full")
	time.Sleep(50 * time.Millisecond)
	if w := m.Take("full"); w.Samples != 0 {
		t.Errorf("a closed socket's slot took %d samples in 50 ms: %+v", w.Samples, w)
	}
}

// TestFillTimerIdle: the timers tick only while a socket is watched: an
// idle explorer, watching none, wakes no CPU 1000 times a second.
func TestFillTimerIdle(t *testing.T) {
	m, ft := openTimerMeter(t)
	_, ino := socketPair(t)
	idle := func() uint64 {
		a, _ := ft.counts()
		time.Sleep(100 * time.Millisecond)
		b, _ := ft.counts()
		return b - a
	}
	if n := idle(); n != 0 {
		t.Errorf("%d ticks in 100 ms with nothing watched, want 0", n)
	}
	if err := m.Set("g", []uint64{ino}); err != nil {
		t.Fatal(err)
	}
	if n := idle(); n < 50 {
		t.Errorf("%d ticks in 100 ms with a socket watched, want about 100", n)
	}
	m.Set("g", nil)
	if n := idle(); n != 0 {
		t.Errorf("%d ticks in 100 ms after the last socket left, want 0", n)
	}
}

// TestFillTimerCostFlat: what the timer costs does not grow with the
// bytes moved. The same watched pair runs two phases of equal length, a
// writer sending 2 MiB a call as fast as its reader takes them, then
// 64 KiB every 20 ms: the ticks (the timer program's own count of its
// runs) are the same in both within a quarter, while the bytes differ
// more than tenfold, the find program ran once per send call (none where
// the iterator found the socket: it is off then), and the exact
// programs' changes (one or more per skb) grew with the bytes.
func TestFillTimerCostFlat(t *testing.T) {
	m, ft := openTimerMeter(t)
	e, err := OpenFillEvents()
	if err != nil {
		t.Skipf("the exact fill programs cannot load here: %v", err)
	}
	defer e.Close()
	fast := costPhase(t, ft, m, e, 2<<20, 0)
	slow := costPhase(t, ft, m, e, 64<<10, 20*time.Millisecond)
	t.Logf("fast: %+v; slow: %+v", fast, slow)
	if fast.bytes < 10*slow.bytes {
		t.Fatalf("the fast phase moved %d bytes, the slow %d: not tenfold, nothing to compare", fast.bytes, slow.bytes)
	}
	if r := float64(fast.ticks) / float64(slow.ticks); r < 0.8 || r > 1.25 {
		t.Errorf("%d ticks moving %d bytes, %d moving %d: the timer's runs grew with the data (ratio %.2f)", fast.ticks, fast.bytes, slow.ticks, slow.bytes, r)
	}
	for _, p := range []costCounts{fast, slow} {
		if ft.iter != nil && p.finds != 0 {
			t.Errorf("the find program saw %d send calls of a watched socket the iterator had found, want none: it is off", p.finds)
		}
		if ft.iter == nil && (p.finds+2 < p.sends || p.finds > p.sends+2) {
			t.Errorf("the find program saw %d send calls of the watched socket, the writer made %d", p.finds, p.sends)
		}
	}
	if float64(fast.changes) < 5*float64(slow.changes) {
		t.Errorf("the exact programs integrated %d changes moving %d bytes and %d moving %d: they should grow with the data", fast.changes, fast.bytes, slow.changes, slow.bytes)
	}
}

// costCounts are one phase's counts.
type costCounts struct{ ticks, finds, sends, bytes, changes uint64 }

// costPhase runs a new watched pair for 500 ms, the writer sending size
// bytes a call and pausing pause between calls, the reader reading
// everything until the writer shuts its end, and counts.
func costPhase(t *testing.T, ft *fillTimer, m, e *FillMeter, size int, pause time.Duration) costCounts {
	pair, ino := socketPair(t)
	for _, fd := range pair {
		unix.SetNonblock(fd, false)
	}
	for _, mm := range []*FillMeter{m, e} {
		if err := mm.Set("g", []uint64{ino}); err != nil {
			t.Fatal(err)
		}
		defer mm.Set("g", nil)
	}
	var sends, bytes atomic.Uint64
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer unix.Shutdown(pair[0], unix.SHUT_WR)
		buf := make([]byte, size)
		for !done.Load() {
			n, err := unix.Write(pair[0], buf)
			if err != nil {
				return
			}
			sends.Add(1)
			bytes.Add(uint64(n))
			time.Sleep(pause)
		}
	}()
	go func() {
		defer wg.Done()
		buf := make([]byte, 256<<10)
		for {
			if n, err := unix.Read(pair[1], buf); n <= 0 && !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}()
	e.Take("g")
	t0, f0 := ft.counts()
	time.Sleep(500 * time.Millisecond)
	t1, f1 := ft.counts()
	s, b := sends.Load(), bytes.Load()
	changes := e.Take("g").Events
	done.Store(true)
	wg.Wait()
	return costCounts{ticks: t1 - t0, finds: f1 - f0, sends: s, bytes: b, changes: changes}
}

// TestMeasureFillTimer: doctor's measure of the timer's cost counts the
// ticks of its window (1000 a second, so about 200 in 200 ms) and the
// send calls of its loop, and times each.
func TestMeasureFillTimer(t *testing.T) {
	openTimerMeter(t)
	c, err := MeasureFillTimer(4, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", c)
	if c.Ticks < 100 || c.Ticks > 400 || c.TickNs <= 0 || c.Finds < 100 || c.FindNs <= 0 {
		t.Errorf("cost %+v: want about 200 ticks and many finds, each timed", c)
	}
}

// TestFillTimerWatchesTwoFullSides: two sides at the most connections a
// side takes (64) are 128 sender sockets, every one watched, and the
// tick's loop reaches the last slot: its socket, full, reads full. With
// 64 slots the second side's sockets were refused.
func TestFillTimerWatchesTwoFullSides(t *testing.T) {
	m, _ := openTimerMeter(t)
	var a, b []uint64
	var last [2]int
	for i := range 128 {
		p, ino := socketPair(t)
		if i < 64 {
			a = append(a, ino)
		} else {
			b = append(b, ino)
		}
		last = p
	}
	if err := m.Set("A", a); err != nil {
		t.Fatal(err)
	}
	if err := m.Set("last", b[len(b)-1:]); err != nil {
		t.Fatal(err)
	}
	if err := m.Set("B", b[:len(b)-1]); err != nil {
		t.Fatal(err)
	}
	if n := m.Watching(); n != 128 {
		t.Fatalf("watching %d sockets, want 128", n)
	}
	buf := make([]byte, 4096)
	for range 10000 {
		if _, err := unix.Write(last[0], buf); errors.Is(err, unix.EAGAIN) {
			break
		}
	}
	m.Take("last") // the ticks while it filled are not the level to check
	if w := takeSamples(m, "last", 100); w.Samples < 100 || math.Abs(w.FullPct-100) > 1e-6 {
		t.Errorf("the 128th socket: %+v, want 100 samples or more, all full", w)
	}
}

// TestFillTimerFindsAnIdleSender: a sender whose buffer was filled
// before it was watched, by a peer that reads nothing, and which sends
// nothing after: the timer reads it full from the moment it is watched,
// found by the iterator over unix sockets. Found at the send call only,
// it took no sample at all.
func TestFillTimerFindsAnIdleSender(t *testing.T) {
	m, ft := openTimerMeter(t)
	if ft.iter == nil {
		t.Skipf("no iterator over unix sockets here: %v", ft.iterErr)
	}
	full, ino := socketPair(t)
	buf := make([]byte, 4096)
	for range 10000 {
		if _, err := unix.Write(full[0], buf); errors.Is(err, unix.EAGAIN) {
			break
		}
	}
	_, finds0 := ft.counts()
	if err := m.Set("idle", []uint64{ino}); err != nil {
		t.Fatal(err)
	}
	outq, _ := unix.IoctlGetInt(full[0], unix.TIOCOUTQ)
	w := takeSamples(m, "idle", 100)
	way, _ := m.FoundBy()
	t.Logf("%+v (SIOCOUTQ %d); found by %s", w, outq, way)
	if w.Samples < 100 || math.Abs(w.FullPct-100) > 1e-6 || math.Abs(w.MeanBytes-float64(outq)) > 1e-6 {
		t.Errorf("an idle sender full before it was watched: %+v, want 100 samples or more, all full at %d bytes", w, outq)
	}
	if _, finds := ft.counts(); finds != finds0 {
		t.Errorf("the find program saw %d send calls of a sender that made none", finds-finds0)
	}
	if n := ft.iterFinds(); n == 0 {
		t.Errorf("the iterator found no watched socket")
	}
}

// TestFillTimerFindsAtSendWithoutIterator: where iterators are not
// available, a watched sender is found at its next send call: nothing
// read before it, its level read after it.
func TestFillTimerFindsAtSendWithoutIterator(t *testing.T) {
	m, ft := openTimerMeter(t)
	if ft.iter != nil {
		ft.dropIter(errors.New("closed by the test"))
	}
	if way, why := m.FoundBy(); way != FoundBySend || why != "closed by the test" {
		t.Errorf("found by %q (%q), want %q and the reason", way, why, FoundBySend)
	}
	pair, ino := socketPair(t)
	unix.Write(pair[0], make([]byte, 1000))
	if err := m.Set("g", []uint64{ino}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	if w := m.Take("g"); w.Samples != 0 {
		t.Fatalf("%d samples before the socket's first send call, without the iterator", w.Samples)
	}
	unix.Write(pair[0], make([]byte, 1000))
	outq, _ := unix.IoctlGetInt(pair[0], unix.TIOCOUTQ)
	if w := takeSamples(m, "g", 20); w.Samples < 20 || math.Abs(w.MeanBytes-float64(outq)) > 1e-6 {
		t.Errorf("after a send call: %+v, want 20 samples or more of %d bytes (SIOCOUTQ)", w, outq)
	}
}

// TestFillTimerFindProgramOnlyWhileNeeded: while the iterator has found
// every watched socket, no program runs at send calls (a watched
// sender's 100 writes: no find); a socket of another network namespace,
// which the iterator over this one's unix sockets does not see, puts
// the find program on, is found at its next send call and measured, and
// when it leaves the program is off again.
func TestFillTimerFindProgramOnlyWhileNeeded(t *testing.T) {
	m, ft := openTimerMeter(t)
	if ft.iter == nil {
		t.Skipf("no iterator over unix sockets here: %v", ft.iterErr)
	}
	here, hereIno := socketPair(t)
	if err := m.Set("g", []uint64{hereIno}); err != nil {
		t.Fatal(err)
	}
	_, f0 := ft.counts()
	for range 100 {
		unix.Write(here[0], []byte{1})
	}
	if _, f1 := ft.counts(); ft.finding() || f1 != f0 {
		t.Errorf("the find program is on (%v) and saw %d send calls of a socket the iterator found, want off", ft.finding(), f1-f0)
	}
	away, awayIno := otherNetnsPair(t)
	if err := m.Set("g", []uint64{hereIno, awayIno}); err != nil {
		t.Fatal(err)
	}
	if !ft.finding() {
		t.Fatal("a socket of another network namespace is watched and left unfound: the find program should be on")
	}
	unix.Write(away[0], make([]byte, 1000))
	outq, _ := unix.IoctlGetInt(away[0], unix.TIOCOUTQ)
	m.Set("away", []uint64{awayIno})
	m.Take("away")
	if w := takeSamples(m, "away", 20); w.Samples < 20 || math.Abs(w.MeanBytes-float64(outq)) > 1e-6 {
		t.Errorf("another network namespace's socket after a send call: %+v, want 20 samples or more of %d bytes", w, outq)
	}
	m.Set("away", nil)
	m.Set("g", []uint64{hereIno})
	if ft.finding() {
		t.Error("the find program is still on after the socket it was for left")
	}
}

// otherNetnsPair is a unix socketpair made in a network namespace of its
// own, with its sender's inode, or the test skips where one cannot be
// made.
func otherNetnsPair(t *testing.T) ([2]int, uint64) {
	t.Helper()
	type made struct {
		pair [2]int
		err  error
	}
	ch := make(chan made, 1)
	go func() {
		runtime.LockOSThread() // left locked, so the thread dies, if it cannot go back
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- made{err: err}
			return
		}
		defer unix.Close(orig)
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- made{err: err}
			return
		}
		p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if e := unix.Setns(orig, unix.CLONE_NEWNET); e == nil {
			runtime.UnlockOSThread()
		}
		ch <- made{p, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Skipf("no socketpair in a network namespace of its own: %v", r.err)
	}
	t.Cleanup(func() { unix.Close(r.pair[0]); unix.Close(r.pair[1]) })
	var st unix.Stat_t
	if err := unix.Fstat(r.pair[0], &st); err != nil {
		t.Fatal(err)
	}
	return r.pair, st.Ino
}
