//go:build linux

package sockdiag

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"nbdscope/internal/testbin"
)

func TestProcessSocketsAndDescribe(t *testing.T) {
	p := newSocketPair(t)
	fds, err := ProcessSockets(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		want := FD{PID: os.Getpid(), FD: p.fd[i], Inode: p.ino[i]}
		if !slices.Contains(fds, want) {
			t.Fatalf("ProcessSockets has no %+v: %+v", want, fds)
		}
	}
	socks, err := dial(t).Describe(fds)
	if err != nil {
		t.Fatal(err)
	}
	var mine []Socket
	for _, s := range socks {
		if s.Inode == p.ino[0] || s.Inode == p.ino[1] {
			mine = append(mine, s)
		}
	}
	if len(mine) != 2 || mine[0].Kind != KindUnix || mine[0].Peer != mine[1].Inode || mine[1].Peer != mine[0].Inode {
		t.Fatalf("the pair described as %+v", mine)
	}
	links := Links(mine[:1], mine[1:])
	want := fmt.Sprintf("PID %d fd %d ↔ PID %d fd %d (unix)", os.Getpid(), mine[0].Holders[0].FD, os.Getpid(), mine[1].Holders[0].FD)
	if len(links) != 1 || links[0].String() != want {
		t.Fatalf("links = %v, want [%s]", links, want)
	}
}

func TestUnixExactLookupAndGone(t *testing.T) {
	c := dial(t)
	p := newSocketPair(t)
	s, err := c.UnixSocket(p.ino[0], NoCookie)
	if err != nil {
		t.Fatal(err)
	}
	if s.Inode != p.ino[0] || s.Peer != p.ino[1] || s.Type != TypeStream || s.State != StateEstablished || !s.Mem.Valid {
		t.Fatalf("lookup = %+v", s)
	}
	if _, err := c.UnixSocket(p.ino[0], s.Cookie); err != nil {
		t.Fatalf("lookup with its own cookie: %v", err)
	}
	wrong := Cookie{s.Cookie[0] ^ 1, s.Cookie[1]}
	if _, err := c.UnixSocket(p.ino[0], wrong); !errors.Is(err, ErrGone) || !errors.Is(err, syscall.ESTALE) {
		t.Fatalf("lookup with another socket's cookie: err = %v, want gone (ESTALE)", err)
	}
	p.closeBoth()
	if _, err := c.UnixSocket(p.ino[0], s.Cookie); !errors.Is(err, ErrGone) {
		t.Fatalf("lookup of a closed socket: err = %v, want gone", err)
	}
	// The connection is still usable after errors.
	q := newSocketPair(t)
	if _, err := c.UnixSocket(q.ino[1], NoCookie); err != nil {
		t.Fatalf("lookup after errors: %v", err)
	}
}

func TestUnixListenerNameAndPeers(t *testing.T) {
	path := dialUnixListener(t).path
	fds, err := ProcessSockets(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	socks, err := dial(t).Describe(fds)
	if err != nil {
		t.Fatal(err)
	}
	var listener, accepted *Socket
	for i := range socks {
		u := socks[i].Unix
		if u.Name == path && u.State == StateListen {
			listener = &socks[i]
		}
		if u.Name == path && u.State == StateEstablished {
			accepted = &socks[i]
		}
	}
	if listener == nil || accepted == nil {
		t.Fatalf("no listener and accepted socket named %s among %+v", path, socks)
	}
	links := Links([]Socket{*accepted}, socks)
	if len(links) != 1 || links[0].B.Unix.Name != "" || links[0].B.Peer != accepted.Inode {
		t.Fatalf("the accepted socket's link: %v", links)
	}
}

func TestTCPLoopbackDescribe(t *testing.T) {
	for _, tc := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
		t.Run(tc.network, func(t *testing.T) {
			client, server := tcpPair(t, tc.network, tc.addr)
			ci, si := tcpInode(t, client), tcpInode(t, server)
			fds, err := ProcessSockets(os.Getpid())
			if err != nil {
				t.Fatal(err)
			}
			c := dial(t)
			socks, err := c.Describe(fds)
			if err != nil {
				t.Fatal(err)
			}
			byIno := map[Inode]Socket{}
			for _, s := range socks {
				byIno[s.Inode] = s
			}
			cs, ss := byIno[ci], byIno[si]
			if cs.Kind != KindTCP || ss.Kind != KindTCP || cs.Peer != si || ss.Peer != ci {
				t.Fatalf("client %+v\nserver %+v", cs, ss)
			}
			if cs.TCP.Local.String() != client.LocalAddr().String() || cs.TCP.Remote.String() != client.RemoteAddr().String() {
				t.Errorf("client tuple %v → %v, Go says %v → %v", cs.TCP.Local, cs.TCP.Remote, client.LocalAddr(), client.RemoteAddr())
			}
			if !cs.TCP.Mem.Valid || !cs.TCP.Info.Valid || cs.TCP.Info.State != StateEstablished {
				t.Errorf("client without meminfo or tcp_info: %+v", cs.TCP)
			}
			again, err := c.TCPSocket(cs.TCP)
			if err != nil || again.Inode != ci {
				t.Fatalf("exact lookup: %+v, %v", again, err)
			}
			client.Close()
			server.Close()
			if _, err := c.TCPSocket(cs.TCP); !errors.Is(err, ErrGone) {
				t.Fatalf("exact lookup of a closed connection: err = %v, want gone", err)
			}
		})
	}
}

// TestTCPInfoOffsets checks the offsets the parser reads against x/sys's
// struct tcp_info, which is generated from the kernel headers.
func TestTCPInfoOffsets(t *testing.T) {
	var ti unix.TCPInfo
	for _, c := range []struct {
		name      string
		ours, sys uintptr
	}{
		{"snd_mss", tcpiSndMSS, unsafe.Offsetof(ti.Snd_mss)},
		{"unacked", tcpiUnacked, unsafe.Offsetof(ti.Unacked)},
		{"rtt", tcpiRTT, unsafe.Offsetof(ti.Rtt)},
		{"snd_cwnd", tcpiSndCwnd, unsafe.Offsetof(ti.Snd_cwnd)},
		{"bytes_acked", tcpiBytesAcked, unsafe.Offsetof(ti.Bytes_acked)},
		{"bytes_received", tcpiBytesReceived, unsafe.Offsetof(ti.Bytes_received)},
		{"notsent_bytes", tcpiNotSent, unsafe.Offsetof(ti.Notsent_bytes)},
		{"sndbuf_limited", tcpiSndbufLimited, unsafe.Offsetof(ti.Sndbuf_limited)},
		{"bytes_sent", tcpiBytesSent, unsafe.Offsetof(ti.Bytes_sent)},
	} {
		if c.ours != c.sys {
			t.Errorf("tcp_info.%s at %d, x/sys says %d", c.name, c.ours, c.sys)
		}
	}
}

// TestTCPQueuesAgreeWithIoctl: inet_diag's wqueue is SIOCOUTQ (bytes not
// yet acknowledged) and the receiver's rqueue is SIOCINQ, on a connection
// whose reader does not read.
func TestTCPQueuesAgreeWithIoctl(t *testing.T) {
	client, server := smallTCPPair(t)
	sf, cf := tcpFD(t, server), tcpFD(t, client)
	sent := fillNonblocking(t, int(sf.Fd()))
	c := dial(t)
	ids := []FD{{Inode: tcpInode(t, server)}, {Inode: tcpInode(t, client)}}
	// An ACK (delayed or a window update) may land between the reads:
	// compare only a snapshot the kernel reported twice unchanged.
	var snd, rcv TCPSocket
	var outq, inq int
	stable := false
	for range 50 {
		before, err := c.Describe(ids)
		if err != nil || len(before) != 2 {
			t.Fatalf("describe: %+v, %v", before, err)
		}
		if outq, err = unix.IoctlGetInt(int(sf.Fd()), unix.SIOCOUTQ); err != nil {
			t.Fatal(err)
		}
		if inq, err = unix.IoctlGetInt(int(cf.Fd()), unix.SIOCINQ); err != nil {
			t.Fatal(err)
		}
		after, err := c.Describe(ids)
		if err != nil || len(after) != 2 {
			t.Fatalf("describe: %+v, %v", after, err)
		}
		snd, rcv = after[0].TCP, after[1].TCP
		if before[0].TCP.WQueue == snd.WQueue && before[1].TCP.RQueue == rcv.RQueue {
			stable = true
			break
		}
		unix.Nanosleep(&unix.Timespec{Nsec: 20e6}, nil)
	}
	if !stable {
		t.Fatal("the queues never held still for two reads")
	}
	// Data the receiver holds but has not acknowledged yet counts in both
	// queues, so together they cover what was written, at least.
	if int(snd.WQueue) != outq || int(rcv.RQueue) != inq || int(snd.WQueue) > sent || int(rcv.RQueue) > sent ||
		int(snd.WQueue+rcv.RQueue) < sent {
		t.Fatalf("sent %d: wqueue %d (SIOCOUTQ %d), peer rqueue %d (SIOCINQ %d)", sent, snd.WQueue, outq, rcv.RQueue, inq)
	}
	if snd.Mem.WmemQueued < snd.WQueue || int64(snd.Mem.WmemQueued) < int64(snd.Mem.Sndbuf)*9/10 {
		t.Errorf("a sender that hit EAGAIN has %d bytes queued (payload %d) against a limit of %d", snd.Mem.WmemQueued, snd.WQueue, snd.Mem.Sndbuf)
	}
}

// TestUnixWmemIsSIOCOUTQ: for a unix stream socket SIOCOUTQ is the very
// figure SK_MEMINFO_WMEM_ALLOC reports (both are sk_wmem_alloc_get), and
// the peer's rqueue is SIOCINQ, the payload. The memory is larger than the
// payload by the skbs' overhead (truesize).
func TestUnixWmemIsSIOCOUTQ(t *testing.T) {
	p := newSocketPair(t)
	sent := fillNonblocking(t, p.fd[0])
	c := dial(t)
	snd, err := c.UnixSocket(p.ino[0], NoCookie)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := c.UnixSocket(p.ino[1], NoCookie)
	if err != nil {
		t.Fatal(err)
	}
	outq, err := unix.IoctlGetInt(p.fd[0], unix.SIOCOUTQ)
	if err != nil {
		t.Fatal(err)
	}
	inq, err := unix.IoctlGetInt(p.fd[1], unix.SIOCINQ)
	if err != nil {
		t.Fatal(err)
	}
	if int(snd.Mem.WmemAlloc) != outq || snd.WQueue != snd.Mem.WmemAlloc {
		t.Errorf("WMEM_ALLOC %d, wqueue %d, SIOCOUTQ %d: want all equal", snd.Mem.WmemAlloc, snd.WQueue, outq)
	}
	if int(rcv.RQueue) != inq || inq != sent {
		t.Errorf("peer rqueue %d, SIOCINQ %d, bytes written %d: want all equal", rcv.RQueue, inq, sent)
	}
	if outq <= sent || outq > 2*sent {
		t.Errorf("in-flight memory %d for %d bytes of payload: want a little more (skb overhead)", outq, sent)
	}
	if int64(outq) < int64(snd.Mem.Sndbuf)*9/10 {
		t.Errorf("a sender that hit EAGAIN has %d of %d in flight: not full", outq, snd.Mem.Sndbuf)
	}
	t.Logf("payload %d, in flight %d (%.1f%% overhead), sndbuf %d", sent, outq, 100*float64(outq-sent)/float64(sent), snd.Mem.Sndbuf)
}

// TestAgreesWithSS compares the memory figures with `ss -xm`'s skmem.
func TestAgreesWithSS(t *testing.T) {
	ssPath := testbin.Tool(t, "apt-get install iproute2", "ss")
	p := newSocketPair(t)
	fillNonblocking(t, p.fd[0])
	s, err := dial(t).UnixSocket(p.ino[0], NoCookie)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(ssPath, "-H", "-x", "-m", "-n").Output()
	if err != nil {
		t.Fatalf("ss: %v", err)
	}
	line := ssLine(string(out), p.ino[0])
	if line == "" {
		t.Fatalf("ss does not list socket %d:\n%s", p.ino[0], out)
	}
	want := fmt.Sprintf("skmem:(r%d,rb%d,t%d,tb%d,", s.Mem.RmemAlloc, s.Mem.Rcvbuf, s.Mem.WmemAlloc, s.Mem.Sndbuf)
	if !strings.Contains(line, want) {
		t.Fatalf("ss says\n%s\nwant it to contain %s", line, want)
	}
}

// ssLine finds the line of `ss -x` whose local port (the inode) is ino.
func ssLine(out string, ino Inode) string {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 6 && f[5] == strconv.FormatUint(uint64(ino), 10) {
			return line
		}
	}
	return ""
}

func TestTreeFindsDescendants(t *testing.T) {
	// sh starts a sleep and waits: a child and a grandchild of the test.
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sh: %v", err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	var tree []int
	for range 500 { // until sh has started its sleep, bounded
		var err error
		if tree, err = Tree(os.Getpid()); err != nil {
			t.Fatal(err)
		}
		if len(tree) >= 3 {
			break
		}
		unix.Nanosleep(&unix.Timespec{Nsec: 10e6}, nil)
	}
	if len(tree) < 3 || tree[0] != os.Getpid() || !slices.Contains(tree, cmd.Process.Pid) {
		t.Fatalf("Tree(%d) = %v, want the test, sh (%d) and its sleep", os.Getpid(), tree, cmd.Process.Pid)
	}
	if _, err := TreeSockets(os.Getpid()); err != nil {
		t.Fatalf("TreeSockets: %v", err)
	}
}

func TestGoneProcess(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	pid := cmd.Process.Pid // reaped: no such process now (barring a fast reuse)
	if _, err := ProcessSockets(pid); !errors.Is(err, ErrGone) {
		t.Errorf("ProcessSockets of an exited process: err = %v, want gone", err)
	}
	if _, err := Tree(pid); !errors.Is(err, ErrGone) {
		t.Errorf("Tree of an exited process: err = %v, want gone", err)
	}
	if _, err := ProcessSockets(-1); err == nil {
		t.Error("ProcessSockets(-1) succeeded")
	}
}

// TestTreeWhileProcessesComeAndGo: scans while a shell starts and reaps
// short-lived children never fail.
func TestTreeWhileProcessesComeAndGo(t *testing.T) {
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 400 ]; do /bin/true & i=$((i+1)); done; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sh: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}()
	for scans := 0; scans < 200; scans++ {
		if _, err := TreeSockets(os.Getpid()); err != nil {
			t.Fatalf("scan %d: %v", scans, err)
		}
		select {
		case <-done:
			done <- nil
			return
		default:
		}
	}
}

// TestDescribeDumpsTCPOnlyWhenASocketMayBeTCP checks that describing
// sockets that are all unix, or learned to be neither unix nor TCP, makes
// no TCP dump (each walks the kernel's whole established hash: Describe),
// and that a TCP socket is still described: one held from the start, and
// one connected after Describe first found it in neither listing.
func TestDescribeDumpsTCPOnlyWhenASocketMayBeTCP(t *testing.T) {
	defer func(d time.Duration) { notTCPFor = d }(notTCPFor)
	notTCPFor = 200 * time.Millisecond
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	unbound, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(unbound)
	c := dial(t)
	describeFDs := func(fds ...int) []Socket {
		t.Helper()
		socks, err := c.Describe(fdsOf(t, fds...))
		if err != nil {
			t.Fatal(err)
		}
		return socks
	}
	if socks := describeFDs(pair[:]...); len(socks) != 2 || c.tcpDumps != 0 {
		t.Fatalf("a socketpair: %d sockets described with %d TCP dumps, want 2 with none", len(socks), c.tcpDumps)
	}
	describeFDs(pair[0], unbound) // the unbound socket is in no listing: learned
	describeFDs(pair[0], unbound)
	if c.tcpDumps != 1 {
		t.Fatalf("%d TCP dumps for an unbound socket described twice, want 1", c.tcpDumps)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().(*net.TCPAddr)
	if err := unix.Connect(unbound, &unix.SockaddrInet4{Port: addr.Port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		socks := describeFDs(unbound)
		if len(socks) == 1 && socks[0].Kind == KindTCP {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a socket connected after it was learned to be neither is still not described: %+v", socks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fdsOf is the FDs of this process's sockets among fds.
func fdsOf(t *testing.T, fds ...int) []FD {
	t.Helper()
	all, err := ProcessSockets(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var out []FD
	for _, f := range all {
		if slices.Contains(fds, f.FD) {
			out = append(out, f)
		}
	}
	if len(out) != len(fds) {
		t.Fatalf("fds %v: found %v", fds, out)
	}
	return out
}
