//go:build linux

package sockdiag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// totals sums the windows a test took.
type totals struct {
	samples, full, empty, recv int
	recvBytes, bytes           float64
	gone                       []Inode
	errors                     int
	lastErr                    error
}

func (t *totals) add(f Fill) {
	t.samples += f.Samples
	t.full += int(math.Round(f.FullPct * float64(f.Samples) / 100))
	t.empty += int(math.Round(f.EmptyPct * float64(f.Samples) / 100))
	t.bytes += f.MeanBytes * float64(f.Samples)
	t.recv += f.RecvSamples
	t.recvBytes += f.RecvMeanBytes * float64(f.RecvSamples)
	t.gone = append(t.gone, f.Gone...)
	t.errors += f.Errors
	if f.LastError != nil {
		t.lastErr = f.LastError
	}
}

func (t *totals) fullPct() float64  { return 100 * float64(t.full) / float64(t.samples) }
func (t *totals) emptyPct() float64 { return 100 * float64(t.empty) / float64(t.samples) }

// collect takes group's windows until until says enough, or 20 s pass
// (then the test fails: the sampler is not sampling).
func collect(t *testing.T, s *Sampler, group string, until func(*totals) bool) totals {
	t.Helper()
	var got totals
	deadline := time.Now().Add(20 * time.Second)
	for !until(&got) {
		if time.Now().After(deadline) {
			t.Fatalf("sampler gave only %+v in 20 s", got)
		}
		time.Sleep(20 * time.Millisecond)
		got.add(s.Take(group))
	}
	return got
}

func samplesAtLeast(n int) func(*totals) bool {
	return func(t *totals) bool { return t.samples >= n }
}

func startSampler(t *testing.T, mode Mode) *Sampler {
	t.Helper()
	s, err := StartSampler(context.Background(), SamplerConfig{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// TestSamplerStalledReaderIsFull: a unix socketpair and a listener's
// accepted socket whose readers never read: every sample is full.
func TestSamplerStalledReaderIsFull(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			p := newSocketPair(t)
			sent := fillNonblocking(t, p.fd[0])
			acc := unixAccepted(t)
			fillNonblocking(t, acc.fd)

			s := startSampler(t, mode)
			s.Set("pair", []Inode{p.ino[0]})
			s.Set("listener", []Inode{acc.ino})
			got := collect(t, s, "pair", samplesAtLeast(200))
			if got.fullPct() < 90 || got.errors != 0 || len(got.gone) != 0 {
				t.Fatalf("stalled reader: %.1f%% full of %d samples (%+v); want ≥ 90%%", got.fullPct(), got.samples, got)
			}
			if got.recv != got.samples || got.recvBytes/float64(got.recv) != float64(sent) {
				t.Errorf("receiver seen %d of %d times, mean %.0f bytes queued; %d were written", got.recv, got.samples, got.recvBytes/float64(got.recv), sent)
			}
			lst := collect(t, s, "listener", samplesAtLeast(200))
			if lst.fullPct() < 90 {
				t.Fatalf("accepted socket of a stalled client: %.1f%% full (%+v)", lst.fullPct(), lst)
			}
		})
	}
}

type acceptedSock struct {
	fd  int
	ino Inode
}

// unixAccepted gives the server end of a connection to a unix listener,
// as a descriptor the test owns; the client end stays open and unread.
func unixAccepted(t *testing.T) acceptedSock {
	t.Helper()
	c := dialUnixListener(t)
	c.ln.Close()
	f, err := c.sv.(*net.UnixConn).File()
	c.sv.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return acceptedSock{fd: int(f.Fd()), ino: fdInode(t, int(f.Fd()))}
}

// unixListenerConn is a unix listener on a fresh path and a connection
// to it: the client end and the server end it accepted.
type unixListenerConn struct {
	path   string
	ln     net.Listener
	cl, sv net.Conn
}

// dialUnixListener listens on a fresh path, connects and accepts; each
// end is closed when the test ends, if the test has not closed it before.
func dialUnixListener(t *testing.T) unixListenerConn {
	t.Helper()
	c := unixListenerConn{path: filepath.Join(t.TempDir(), "s")}
	var err error
	if c.ln, err = net.Listen("unix", c.path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.ln.Close() })
	if c.cl, err = net.Dial("unix", c.path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cl.Close() })
	if c.sv, err = c.ln.Accept(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.sv.Close() })
	return c
}

// TestSamplerDrainingReaderIsEmpty: a reader that reads at once and a
// writer that writes a little now and then: (nearly) every sample empty.
func TestSamplerDrainingReaderIsEmpty(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			p := newSocketPair(t)
			stop := slowWriter(t, p.fd[0], p.fd[1])
			defer stop()
			s := startSampler(t, mode)
			s.Set("A", []Inode{p.ino[0]})
			got := collect(t, s, "A", samplesAtLeast(200))
			if got.emptyPct() < 90 || got.fullPct() != 0 {
				t.Fatalf("draining reader: %.1f%% empty, %.1f%% full of %d samples; want ≥ 90%% empty", got.emptyPct(), got.fullPct(), got.samples)
			}
		})
	}
}

// slowWriter writes 512 bytes every millisecond to wfd while a reader
// drains rfd, until the returned stop is called.
func slowWriter(t *testing.T, wfd, rfd int) (stop func()) {
	t.Helper()
	write := func(b []byte) error { _, err := unix.Write(wfd, b); return err }
	endWrite := func() { unix.Shutdown(wfd, unix.SHUT_WR) }
	drain := func() {
		buf := make([]byte, 64<<10)
		for {
			if n, err := unix.Read(rfd, buf); n <= 0 || err != nil {
				return
			}
		}
	}
	return trickle(write, endWrite, drain)
}

// trickle writes 512 bytes every millisecond with write while drain reads
// the other end, until the returned stop is called or a write fails; then
// endWrite ends the stream, which ends drain.
func trickle(write func([]byte) error, endWrite, drain func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer endWrite()
		buf := make([]byte, 512)
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			if err := write(buf); err != nil {
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		drain()
	}()
	return func() { close(done); wg.Wait() }
}

// TestSamplerSocketClosedWhileSampled: closing the sockets mid-run is
// reported as gone, once, and sampling goes on for the others.
func TestSamplerSocketClosedWhileSampled(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			p, q := newSocketPair(t), newSocketPair(t)
			fillNonblocking(t, q.fd[0])
			s := startSampler(t, mode)
			s.Set("A", []Inode{p.ino[0], q.ino[0]})
			collect(t, s, "A", samplesAtLeast(20))
			p.closeBoth()
			got := collect(t, s, "A", func(t *totals) bool { return len(t.gone) > 0 })
			if !slices.Equal(got.gone, []Inode{p.ino[0]}) || got.errors != 0 {
				t.Fatalf("after closing %d: %+v", p.ino[0], got)
			}
			after := collect(t, s, "A", samplesAtLeast(20))
			if len(after.gone) != 0 || after.fullPct() != 100 {
				t.Fatalf("the remaining socket: %+v", after)
			}
		})
	}
}

// TestSamplerTCPLoopback: a TCP connection whose reader does not read is
// full; one whose reader drains a slow writer is empty.
func TestSamplerTCPLoopback(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			_, server := smallTCPPair(t) // the client reads nothing
			stopW := tcpBlockedWriter(t, server)
			defer stopW()
			c2, s2 := tcpPair(t, "tcp6", "[::1]:0")
			stop := tcpSlowWriter(t, s2, c2)
			defer stop()

			s := startSampler(t, mode)
			s.Set("stalled", []Inode{tcpInode(t, server)})
			s.Set("drained", []Inode{tcpInode(t, s2)})
			full := collect(t, s, "stalled", samplesAtLeast(200))
			if full.fullPct() < 90 || full.recv != full.samples || full.errors != 0 {
				t.Fatalf("stalled TCP reader: %.1f%% full (%+v)", full.fullPct(), full)
			}
			t.Logf("stalled: %.1f%% full, mean %.0f bytes in flight", full.fullPct(), full.bytes/float64(full.samples))
			empty := collect(t, s, "drained", samplesAtLeast(200))
			if empty.emptyPct() < 90 || empty.errors != 0 || empty.recv != empty.samples {
				t.Fatalf("draining TCP reader: %.1f%% empty (%+v)", empty.emptyPct(), empty)
			}
		})
	}
}

// tcpBlockedWriter writes to w without pause: as its reader reads nothing,
// the writer soon waits in the kernel for room, as a server does whose
// client is slower. stop closes w, which ends the writer.
func tcpBlockedWriter(t *testing.T, w *net.TCPConn) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 256<<10)
		for {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}()
	return func() { w.Close(); <-done }
}

// tcpSlowWriter is slowWriter over a TCP connection: 512 bytes every
// millisecond to w while r is drained.
func tcpSlowWriter(t *testing.T, w, r *net.TCPConn) (stop func()) {
	t.Helper()
	write := func(b []byte) error { _, err := w.Write(b); return err }
	return trickle(write, func() { w.CloseWrite() }, func() { io.Copy(io.Discard, r) })
}

func TestStartSamplerRejectsBadConfig(t *testing.T) {
	if _, err := StartSampler(context.Background(), SamplerConfig{Rate: -3}); err == nil || errors.Is(err, ErrNotAvailable) {
		t.Fatalf("a negative rate: err = %v", err)
	}
}

// TestSamplerTickAllocatesNothing: 200 ticks a second must not feed the
// garbage collector; buffers are kept from tick to tick.
func TestSamplerTickAllocatesNothing(t *testing.T) {
	for _, held := range []bool{false, true} {
		for _, mode := range modes {
			t.Run(fmt.Sprintf("%v/held=%v", mode, held), func(t *testing.T) {
				s, err := newSampler(SamplerConfig{Mode: mode}, linuxProbe(t))
				if err != nil {
					t.Fatal(err)
				}
				var set []FD
				for range 4 {
					p := newSocketPair(t)
					set = append(set, p.holder(0, held))
				}
				_, server := tcpPair(t, "tcp4", "127.0.0.1:0")
				set = append(set, FD{Inode: tcpInode(t, server)})
				s.SetHeld("A", set)
				s.tick() // finds them
				s.tick() // buffers grown
				if n := testing.AllocsPerRun(50, s.tick); n != 0 {
					t.Errorf("%v allocations per tick", n)
				}
				if f := s.Take("A"); f.Errors != 0 || f.Samples != f.Ticks*5 {
					t.Errorf("window %+v", f)
				}
			})
		}
	}
}

// TestSamplerConcurrentUse: sets changed, windows taken and groups removed
// from other goroutines while it samples (run it with -race).
func TestSamplerConcurrentUse(t *testing.T) {
	var inos []Inode
	for range 6 {
		inos = append(inos, newSocketPair(t).ino[0])
	}
	s := startSampler(t, ModeAuto)
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			group := string(rune('A' + g))
			for i := range 200 {
				s.Set(group, inos[i%3:i%3+3])
				s.Take(group)
				if i%50 == 49 {
					s.Remove(group)
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	wg.Wait()
	s.Set("A", inos)
	got := collect(t, s, "A", samplesAtLeast(60))
	if got.errors != 0 || len(got.gone) != 0 {
		t.Fatalf("after the churn: %+v", got)
	}
}
