//go:build linux

package sockdiag

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The cost of each kind of lookup, for choosing between them (see the
// Mode docs), in CPU time: the wall time of ns/op means little on a machine
// others share.

func cpuPerOp(b *testing.B) func() {
	before := rusageTB(b)
	return func() {
		b.ReportMetric(float64((rusageTB(b)-before).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func rusageTB(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkUnixDump: one dump of the namespace's unix sockets, as the
// sampler asks for it.
func BenchmarkUnixDump(b *testing.B) {
	newSocketPair(b)
	c := dial(b)
	var buf []UnixSocket
	defer cpuPerOp(b)()
	for b.Loop() {
		var err error
		if buf, err = c.unixDump(buf[:0], unixShowSample); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(buf)), "sockets")
}

// BenchmarkUnixExact16: 16 exact lookups one round trip each.
func BenchmarkUnixExact16(b *testing.B) {
	reqs := unixReqs(b, 16)
	c := dial(b)
	defer cpuPerOp(b)()
	for b.Loop() {
		for _, r := range reqs {
			if _, err := c.unixExact(r.ino, NoCookie, unixShowSample); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkUnixBatch16: the same 16 lookups in one batch.
func BenchmarkUnixBatch16(b *testing.B) {
	reqs := unixReqs(b, 16)
	benchBatch(b, reqs)
}

func unixReqs(b *testing.B, n int) []exactReq {
	var reqs []exactReq
	for range n {
		p := newSocketPair(b)
		reqs = append(reqs, exactReq{kind: KindUnix, ino: p.ino[0], cookie: NoCookie})
	}
	return reqs
}

func benchBatch(b *testing.B, reqs []exactReq) {
	c := dial(b)
	res := make([]exactRes, len(reqs))
	defer cpuPerOp(b)()
	for b.Loop() {
		if err := c.exactBatch(reqs, res); err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.err != nil {
				b.Fatal(r.err)
			}
		}
	}
}

// BenchmarkTCPDump: one dump of the namespace's TCP sockets over IPv4; the
// kernel walks its whole established hash table, however few there are.
func BenchmarkTCPDump(b *testing.B) {
	tcpPair(b, "tcp4", "127.0.0.1:0")
	c := dial(b)
	var buf []TCPSocket
	defer cpuPerOp(b)()
	for b.Loop() {
		var err error
		if buf, err = c.tcpDump(buf[:0], afInet, inetExtSample, sampleTCPStates); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(buf)), "sockets")
}

// BenchmarkTCPBatch16: 16 exact lookups (hash lookups) in one batch.
func BenchmarkTCPBatch16(b *testing.B) {
	c := dial(b)
	var reqs []exactReq
	for range 8 {
		client, server := tcpPair(b, "tcp4", "127.0.0.1:0")
		socks, err := c.Describe([]FD{{Inode: tcpInode(b, server)}, {Inode: tcpInode(b, client)}})
		if err != nil || len(socks) != 2 {
			b.Fatal(socks, err)
		}
		for _, s := range socks {
			reqs = append(reqs, exactReq{kind: KindTCP, key: s.TCP.key(), cookie: NoCookie})
		}
	}
	benchBatch(b, reqs)
}

// BenchmarkTicker200Hz: the wake-ups alone, the floor under any sampler at
// 200 Hz: a goroutine woken by a ticker 400 times.
func BenchmarkTicker200Hz(b *testing.B) {
	for b.Loop() {
		t := time.NewTicker(time.Second / DefaultRate)
		before, start := rusageTB(b), time.Now()
		for range 400 {
			<-t.C
		}
		t.Stop()
		b.ReportMetric(100*(rusageTB(b)-before).Seconds()/time.Since(start).Seconds(), "cpu-%/core")
	}
}

// BenchmarkHeldRead16: the same 16 sockets read through their holder
// (pidfd_getfd, fstat, getsockopt(SO_MEMINFO), close each), as SetHeld's
// sampler does.
func BenchmarkHeldRead16(b *testing.B) {
	var fds []FD
	for range 16 {
		fds = append(fds, newSocketPair(b).holder(0, true))
	}
	r := newPidfdReader()
	defer r.Close()
	defer cpuPerOp(b)()
	for b.Loop() {
		for _, h := range fds {
			if _, err := r.heldMem(h); err != nil {
				b.Fatal(err)
			}
		}
	}
}
