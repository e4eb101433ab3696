package syscount

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// BenchmarkOverhead measures what counting costs a tight loop of one
// 1-byte write and one 1-byte read on a unix socketpair (two system calls
// per op), against the same loop uncounted, alternating the two so that
// a busy machine's drift falls on both. Time is the loop thread's own CPU
// time (CLOCK_THREAD_CPUTIME_ID: the calls are the work, and on a shared
// machine wall time mostly measures the other tenants). It reports the
// counted loop's "cpu-ns/op" and "ratio", counted over uncounted:
//   - fd: this process counted, filtered to the pair's fds (what nbdscope
//     does to a server or client);
//   - all: this process counted on every fd;
//   - bystander: another process counted; this loop is not, but every
//     task on the machine takes the kernel's slower syscall path while
//     any syscall tracepoint is in use.
//
// BenchmarkPingPong adds what a tight loop lacks: a context switch at
// every call, as in a server blocking in recvmsg.
//
// Each runs counting per process (bpf/…) and per thread (perf/…).
func BenchmarkOverhead(b *testing.B) {
	needCounting(b)
	for _, mode := range []string{"bpf/fd", "bpf/all", "bpf/bystander", "bpf/sockets", "bpf/sockets-bystander", "perf/fd", "perf/all", "perf/bystander"} {
		b.Run(mode, func(b *testing.B) {
			c := tightLoop(b, openFor, mode)
			n, err := c.Read()
			if err != nil {
				b.Fatal(err)
			}
			if !strings.HasSuffix(mode, "bystander") && n.Calls(Send) < uint64(b.N) {
				b.Fatalf("counted %d writes, made at least %d", n.Calls(Send), b.N)
			}
		})
	}
}

// BenchmarkTracepointFloor measures what the kernel's syscall
// tracepoints cost before any counting program does anything: the tight
// loop of BenchmarkOverhead with a program that only returns on the
// entry and exit tracepoints of write and read, against the same loop
// with none, alternating. "cpu-ns/call" is what the tracepoints add to
// each call (entry and exit together), the floor of counting per
// process on them; the counting programs' own cost is BenchmarkOverhead's
// bpf/fd minus this.
func BenchmarkTracepointFloor(b *testing.B) {
	needCounting(b)
	tp, err := loadTracepoints()
	if err != nil {
		b.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pair := loopPair(b)
	on, off := alternate(b, func(n int) time.Duration { return timeLoop(b, pair, n, nil) }, func(n int) time.Duration {
		hooks := attachReturnOnly(b, tp, Write, Read)
		defer closeHooks(hooks)
		return timeLoop(b, pair, n, nil)
	})
	b.ReportMetric(float64((on-off).Nanoseconds())/float64(2*b.N), "cpu-ns/call")
	b.ReportMetric(float64(on)/float64(off), "ratio")
}

// BenchmarkSocketFloor is BenchmarkTracepointFloor at the socket layer
// (Options.Sockets): a program that only returns, on sock_recv_length and
// sock_send_length, against none; "socket" loops on a socketpair, as the
// floor benchmark does, "eventfd" on an eventfd, whose calls the socket
// layer never sees.
func BenchmarkSocketFloor(b *testing.B) {
	needCounting(b)
	tp, err := loadTracepoints()
	if err != nil {
		b.Fatal(err)
	}
	var ids []uint64
	for _, ev := range sockEvents {
		id, err := readEventID(tp.dir, "sock", ev)
		if err != nil {
			b.Skipf("no socket-layer tracepoint here: %v", err)
		}
		ids = append(ids, id)
	}
	for _, on := range []string{"socket", "eventfd"} {
		b.Run(on, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			loop := func(n int) time.Duration { return timeLoop(b, loopPair(b), n, nil) }
			if on == "eventfd" {
				loop = func(n int) time.Duration { return eventfdLoop(b, n) }
			}
			onTime, offTime := alternate(b, loop, func(n int) time.Duration {
				hooks := attachReturnOnlyAt(b, ids)
				defer closeHooks(hooks)
				return loop(n)
			})
			b.ReportMetric(float64((onTime-offTime).Nanoseconds())/float64(2*b.N), "cpu-ns/call")
			b.ReportMetric(float64(onTime)/float64(offTime), "ratio")
		})
	}
}

// eventfdLoop times n ops of one write and one read of an eventfd.
func eventfdLoop(b *testing.B, n int) time.Duration {
	b.StopTimer()
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(efd)
	buf := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	b.StartTimer()
	t0 := threadCPU(b)
	for range n {
		if _, err := unix.Write(efd, buf); err != nil {
			b.Fatal(err)
		}
		if _, err := unix.Read(efd, buf); err != nil {
			b.Fatal(err)
		}
		buf[0] = 1
	}
	d := threadCPU(b) - t0
	b.StopTimer()
	return d
}

// attachReturnOnly hangs a program that returns at once on the entry
// and exit tracepoints of calls, as bpfEngine.attach hangs the counting
// ones, and returns the hooks that detach them.
func attachReturnOnly(b *testing.B, tp *tracepoints, calls ...Syscall) []hook {
	var ids []uint64
	for _, s := range calls {
		ids = append(ids, tp.enter[s], tp.exit[s])
	}
	return attachReturnOnlyAt(b, ids)
}

// attachReturnOnlyAt hangs one on each tracepoint of ids.
func attachReturnOnlyAt(b *testing.B, ids []uint64) []hook {
	b.StopTimer()
	defer b.StartTimer()
	var hooks []hook
	for _, id := range ids {
		a := &builder{}
		a.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
		prog, err := loadProgram("return_only", a)
		if err != nil {
			b.Fatal(err)
		}
		h, err := attachProgram(id, "return_only", prog)
		hooks = append(hooks, h)
		if err != nil {
			closeHooks(hooks)
			b.Fatal(err)
		}
	}
	return hooks
}

func closeHooks(hooks []hook) {
	for _, h := range hooks {
		h.close()
	}
}

// tightLoop times the tight loop (timeLoop) on a thread of its own,
// counted by what open returns for design (a mode of BenchmarkOverhead,
// or a design of BenchmarkRawGroups), and returns that counter, closed
// when the benchmark ends.
func tightLoop(b *testing.B, open func(*testing.B, string, [2]int) *Counter, design string) *Counter {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pair := loopPair(b)
	c := open(b, design, pair)
	b.Cleanup(func() { c.Close() })
	timeCounted(b, c, func(n int, c *Counter) time.Duration { return timeLoop(b, pair, n, c) })
	return c
}

// loopPair is the socketpair a tight loop writes and reads, closed with
// the benchmark.
func loopPair(b *testing.B) [2]int {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { unix.Close(pair[0]); unix.Close(pair[1]) })
	return [2]int{pair[0], pair[1]}
}

// timeCounted times b.N ops of a loop (loop(n, c) runs n of them, counted
// by c where it is not nil, and returns their CPU time) counted by c
// against as many uncounted, alternating in five rounds so that a busy
// machine's drift falls on both, and reports the counted loop's CPU per
// op and the ratio.
func timeCounted(b *testing.B, c *Counter, loop func(n int, c *Counter) time.Duration) {
	on, off := alternate(b, func(n int) time.Duration { return loop(n, nil) }, func(n int) time.Duration { return loop(n, c) })
	b.ReportMetric(float64(on.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(on)/float64(off), "ratio")
}

// openFor opens the counter a mode measures, disabled: timeLoop enables
// it for the counted half only.
func openFor(b *testing.B, mode string, pair [2]int) *Counter {
	pid := os.Getpid()
	opt := Options{FDs: pair[:]}
	mech, mode, _ := strings.Cut(mode, "/")
	switch mode {
	case "all":
		opt = Options{AllFDs: true}
	case "sockets":
		opt = Options{Sockets: true}
	case "bystander", "sockets-bystander":
		cmd := exec.Command("sleep", "600")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		pid, opt = cmd.Process.Pid, Options{AllFDs: true, Sockets: mode == "sockets-bystander"}
	}
	opt.Mechanism = useMechanism(b, mech)
	c, err := Open(pid, opt)
	if err != nil {
		b.Fatal(err)
	}
	c.setEnabled(false)
	return c
}

// unloadIdle unloads the programs now if no Counter holds them, without
// the linger (releaseBPF): off, a benchmark measures nothing loaded.
func unloadIdle(e *bpfEngine) {
	bpfShared.Lock()
	defer bpfShared.Unlock()
	if bpfShared.e == e && e.refs == 0 {
		bpfShared.e = nil
		go e.close()
	}
}

// timeLoop runs n ops, with c's counters enabled if c is not nil.
func timeLoop(b *testing.B, pair [2]int, n int, c *Counter) time.Duration {
	b.StopTimer()
	if c != nil {
		c.setEnabled(true)
		defer c.setEnabled(false)
	}
	buf := []byte{0}
	b.StartTimer()
	t0 := threadCPU(b)
	for range n {
		if _, err := unix.Write(pair[0], buf); err != nil {
			b.Fatal(err)
		}
		if _, err := unix.Read(pair[1], buf); err != nil {
			b.Fatal(err)
		}
	}
	d := threadCPU(b) - t0
	b.StopTimer()
	return d
}

// alternate runs b.N ops of off and as many of on (each runs n ops and
// returns their time) in five rounds, off then on, and returns their
// times summed.
func alternate(b *testing.B, off, on func(n int) time.Duration) (onTime, offTime time.Duration) {
	const rounds = 5
	for r := range rounds {
		n := b.N / rounds
		if r == rounds-1 {
			n = b.N - r*(b.N/rounds)
		}
		offTime += off(n)
		onTime += on(n)
	}
	return onTime, offTime
}

// threadCPU is the CPU time the calling thread has used.
func threadCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// setEnabled turns every counter of c on or off (the benchmark's switch;
// a disabled syscall tracepoint costs nothing).
//
// Counting per process (bpf), off is with nothing loaded at all: the
// programs cost every caller of the counted calls on the machine, counted
// or not. The counts so far are kept across a pause (retired).
func (c *Counter) setEnabled(on bool) {
	if c.perProcess {
		c.setBPFEnabled(on)
		return
	}
	for _, g := range append(append([]group{}, c.base...), c.onFDs...) {
		g.enable(on)
	}
}

func (c *Counter) setBPFEnabled(on bool) {
	switch {
	case on && c.bpf == nil:
		slot, err := openBPFSlot(c.tp, c.pid, c.mode.children, c.set)
		if err != nil {
			panic(err) // it was open before the pause
		}
		slot.setKeys(c.byPID)
		c.bpf = slot
	case !on && c.bpf != nil:
		n, err := c.readBPF()
		if err != nil {
			panic(err)
		}
		c.retired = n
		e := c.bpf.e
		c.bpf.close()
		c.bpf = nil
		unloadIdle(e)
		<-e.unloaded
	}
}

// BenchmarkRead measures one Counter.Read of this process (two counter
// groups per thread), with event groups (one read(2) per group) and
// without (one per counter). It reports the threads and read(2) calls a
// Read makes.
func BenchmarkRead(b *testing.B) {
	needCounting(b)
	for _, v := range []struct {
		name   string
		groups bool
		fds    int
	}{{"groups/1fd", true, 1}, {"groups/8fds", true, 8}, {"single/1fd", false, 1}, {"single/8fds", false, 8}} {
		b.Run(v.name, func(b *testing.B) {
			old := useGroups
			useGroups = v.groups
			defer func() { useGroups = old }()
			fds := make([]int, v.fds)
			for i := range fds {
				fds[i] = 100 + i // need not be open: a filter is a number
			}
			c, err := Open(os.Getpid(), Options{FDs: fds})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			reads := 0
			for _, g := range append(append([]group{}, c.base...), c.onFDs...) {
				reads += readsOf(g)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.Read(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(c.base)), "threads")
			b.ReportMetric(float64(reads), "reads/op")
		})
	}
}

func readsOf(g group) int {
	if g.grouped {
		return 1
	}
	return len(g.fds)
}

// BenchmarkPingPong: two threads of this process, each counted from Open,
// pass one byte back and forth on a blocking socketpair, so that every
// read blocks and every op switches context twice; perf moves a thread's
// counters on and off the CPU at each switch. Time is the process's CPU
// time; "ratio" as in BenchmarkOverhead; "counters" is per thread:
//   - fd: the pair's fds, all ten calls (30 counters);
//   - fd/anyfd: the same with the six socket-only calls on any fd
//     (Options.AnyFD), as realproc counts a real process (24);
//   - all: every fd, all ten calls (20);
//   - fd/4calls: the pair's fds, read, recvmsg, write and sendmsg (12).
func BenchmarkPingPong(b *testing.B) {
	needCounting(b)
	anyFD := []Syscall{Recvfrom, Recvmsg, Recvmmsg, Sendto, Sendmsg, Sendmmsg}
	for _, v := range []struct {
		name string
		opt  func(pair [2]int) Options
	}{
		{"bpf/fd/anyfd", func(pair [2]int) Options { return Options{FDs: pair[:], AnyFD: anyFD} }},
		{"bpf/sockets", func(pair [2]int) Options { return Options{Sockets: true} }},
		{"perf/fd", func(pair [2]int) Options { return Options{FDs: pair[:]} }},
		{"perf/fd/anyfd", func(pair [2]int) Options { return Options{FDs: pair[:], AnyFD: anyFD} }},
		{"perf/all", func(pair [2]int) Options { return Options{AllFDs: true} }},
		{"perf/fd/4calls", func(pair [2]int) Options {
			return Options{FDs: pair[:], Calls: []Syscall{Read, Recvmsg, Write, Sendmsg}}
		}},
	} {
		b.Run(v.name, func(b *testing.B) {
			mech, _, _ := strings.Cut(v.name, "/")
			m := useMechanism(b, mech)
			pingPong(b, func(pair [2]int) Options { o := v.opt(pair); o.Mechanism = m; return o }, nil)
		})
	}
}

// pingPong measures the counters opt asks for, or those open returns
// (disabled) when opt is nil.
func pingPong(b *testing.B, opt func(pair [2]int) Options, open func(pair [2]int) *Counter) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	echo := startEcho(pair[1])
	defer close(echo)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var c *Counter
	if opt == nil {
		c = open(pair)
	} else {
		var err error
		if c, err = Open(os.Getpid(), opt(pair)); err != nil {
			b.Fatal(err)
		}
		c.setEnabled(false)
	}
	defer c.Close()
	timeCounted(b, c, func(n int, c *Counter) time.Duration { return pingPongRound(b, pair[0], echo, n, c) })
	counters := 0 // per thread: none counting per process
	if len(c.base) > 0 {
		counters += len(c.base[0].fds)
	}
	if len(c.onFDs) > 0 {
		counters += len(c.onFDs[0].fds)
	}
	b.ReportMetric(float64(counters), "counters")
}

// startEcho starts a thread that, told n, echoes n bytes on fd; it exists
// before startEcho returns.
func startEcho(fd int) chan int {
	echo := make(chan int)
	go func() {
		runtime.LockOSThread()
		buf := []byte{0}
		for n := range echo {
			for range n {
				unix.Read(fd, buf)
				unix.Write(fd, buf)
			}
			echo <- 0
		}
	}()
	echo <- 0
	<-echo
	return echo
}

// pingPongRound passes n bytes there and back, counted by c if not nil,
// and returns the process CPU time it took.
func pingPongRound(b *testing.B, fd int, echo chan int, n int, c *Counter) time.Duration {
	if c != nil {
		c.setEnabled(true)
		defer c.setEnabled(false)
	}
	t0 := processCPU(b)
	echo <- n
	buf := []byte{0}
	for range n {
		unix.Write(fd, buf)
		unix.Read(fd, buf)
	}
	<-echo
	return processCPU(b) - t0
}

func processCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// BenchmarkFillCost measures what the fill programs (FillMeter: the
// timer's, and the exact ones at every change) cost a socket call: the
// tight loop of BenchmarkOverhead (a 1-byte write and read on a
// socketpair) with the programs loaded against none, alternating.
// "bystander" watches no socket (what every other socket call on the
// machine pays), "watched" the loop's sender (what a side's data sockets
// pay; the timer's ticks, 1000 a second, fall in it too). "cpu-ns/call"
// is what they add to each call.
func BenchmarkFillCost(b *testing.B) {
	for _, way := range []string{"timer", "events"} {
		for _, watch := range []bool{false, true} {
			benchFillCost(b, way, watch)
		}
	}
}

func benchFillCost(b *testing.B, way string, watch bool) {
	open := map[string]func() (*FillMeter, error){"timer": OpenFillMeter, "events": OpenFillEvents}[way]
	name := way + "/" + map[bool]string{false: "bystander", true: "watched"}[watch]
	b.Run(name, func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pair := loopPair(b)
		var st unix.Stat_t
		if err := unix.Fstat(pair[0], &st); err != nil {
			b.Fatal(err)
		}
		on, off := alternate(b, func(n int) time.Duration { return timeLoop(b, pair, n, nil) }, func(n int) time.Duration {
			b.StopTimer()
			m, err := open()
			if err != nil {
				b.Skip(err)
			}
			defer m.Close()
			if watch {
				m.Set("bench", []uint64{st.Ino})
			}
			return timeLoop(b, pair, n, nil)
		})
		b.ReportMetric(float64((on-off).Nanoseconds())/float64(2*b.N), "cpu-ns/call")
		b.ReportMetric(float64(on)/float64(off), "ratio")
	})
}

// BenchmarkFillTimerTick measures what the fill timer's ticks take from
// whatever runs on a CPU, interrupt included (which doctor's figure, the
// kernel's accounting of the program alone, leaves out): a thread held to
// CPU 0 spins for 100 ms of wall time with the timers off and then on
// (one socket watched), b.N rounds, counting its loop's turns. "lost-%"
// is the share of CPU 0 the ticks took, "ns/tick" that over CPU 0's
// ticks (each CPU's timer fires every fillTickNS × CPUs).
func BenchmarkFillTimerTick(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set unix.CPUSet
	set.Set(0)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		b.Skip(err)
	}
	m, err := OpenFillMeter()
	if err != nil {
		b.Skip(err)
	}
	defer m.Close()
	pair := loopPair(b)
	var st unix.Stat_t
	if err := unix.Fstat(pair[0], &st); err != nil {
		b.Fatal(err)
	}
	var off, on float64
	for range b.N {
		m.Set("bench", nil)
		off += spinFor(100 * time.Millisecond)
		m.Set("bench", []uint64{st.Ino})
		unix.Write(pair[0], []byte{1}) // found at this send call where the iterator is not
		on += spinFor(100 * time.Millisecond)
	}
	m.Set("bench", nil)
	lost := 1 - on/off
	perCPU := 1e9 / float64(fillTickNS*runtime.NumCPU()) // CPU 0's ticks a second
	b.ReportMetric(100*lost, "lost-%")
	b.ReportMetric(lost*1e9/perCPU, "ns/tick")
}

// spinFor counts a busy loop's turns for d of wall time.
func spinFor(d time.Duration) float64 {
	n, x := 0, uint64(1)
	for end := time.Now().Add(d); ; n++ {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if time.Now().After(end) {
			break
		}
	}
	if x == 0 {
		n++ // keeps x live
	}
	return float64(n)
}
