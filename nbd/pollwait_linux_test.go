package nbd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/internal/testbin"
)

// TestPollReaderRoundTrip: a client on the ppoll reader writes 32 MiB
// in 1 MiB requests, 32 in flight (its sends wait in ppoll for room), and
// reads them back byte for byte, with simple and structured replies.
func TestPollReaderRoundTrip(t *testing.T) {
	for _, sr := range []bool{true, false} {
		t.Run(fmt.Sprintf("structured=%v", sr), func(t *testing.T) {
			const size, chunk = 32 << 20, 1 << 20
			ts := startServer(t, Export{Backend: NewMemory(size)})
			c := dial(t, ts, ClientOptions{NoStructuredReply: !sr, Reader: ReaderPoll})
			if !c.Conn().Polled() {
				t.Fatal("the client was asked for the ppoll reader and reads through the netpoller")
			}
			want := make([]byte, size)
			rng := rand.New(rand.NewPCG(3, 4))
			for i := range want {
				want[i] = byte(rng.Uint32())
			}
			got := make([]byte, size)
			for _, pass := range []struct {
				cmd uint16
				buf []byte
			}{{CmdWrite, want}, {CmdRead, got}} {
				ops := make([]*Op, size/chunk)
				for i := range ops {
					ops[i] = NewOp()
					ops[i].Cmd, ops[i].Offset, ops[i].Buf = pass.cmd, uint64(i*chunk), pass.buf[i*chunk:(i+1)*chunk]
					if err := c.Start(ops[i]); err != nil {
						t.Fatal(err)
					}
				}
				for _, op := range ops {
					if err := waitTimeout(t, op, 60*time.Second); err != nil {
						t.Fatal(err)
					}
				}
			}
			if sha256.Sum256(got) != sha256.Sum256(want) {
				t.Fatal("read back differs from what was written")
			}
			if st := c.Conn().Stats(); st.RecvBytes < size || st.SendBytes < size || st.RecvCalls == 0 {
				t.Fatalf("counters: %+v", st)
			}
		})
	}
}

// TestPollReaderReadsEachPartApart: a structured READ reply of 4 KiB,
// queued whole before the client looks, takes four receive calls on the
// ppoll reader, as qemu's client makes (the magic, the rest of the chunk
// header, the data offset, the data), and one through the netpoller's
// 16 KiB read-ahead.
func TestPollReaderReadsEachPartApart(t *testing.T) {
	for _, tc := range []struct {
		reader string
		calls  uint64
	}{{ReaderPoll, 4}, {ReaderNetpoller, 1}} {
		t.Run(tc.reader, func(t *testing.T) {
			if got := replyCalls(t, tc.reader); got != tc.calls {
				t.Errorf("%d receive calls for one 4 KiB reply, want %d", got, tc.calls)
			}
		})
	}
}

// replyCalls sends one 4 KiB READ from a client on reader and answers it
// by hand with one write of the whole reply: the receive calls that
// returned data for it.
func replyCalls(t *testing.T, reader string) uint64 {
	a, b := socketPair(t)
	defer b.Close()
	c, err := NewConn(a)
	if err != nil {
		t.Fatal(err)
	}
	if reader == ReaderPoll {
		if err := c.usePollWait(); err != nil {
			t.Fatal(err)
		}
	}
	cl := newClient(c, ExportInfo{Size: 1 << 20, Structured: true})
	defer cl.Close()
	op := NewOp()
	op.Cmd, op.Buf = CmdRead, make([]byte, 4096)
	if err := cl.Start(op); err != nil {
		t.Fatal(err)
	}
	var req [requestSize]byte
	b.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := readFull(b, req[:]); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, chunkHeaderSize+8+4096)
	putChunkHeader(reply, ChunkFlagDone, ChunkOffsetData, binary.BigEndian.Uint64(req[8:16]), 8+4096)
	for i := range reply[chunkHeaderSize+8:] {
		reply[chunkHeaderSize+8+i] = byte(i)
	}
	before := c.Stats().RecvCalls
	if _, err := b.Write(reply); err != nil {
		t.Fatal(err)
	}
	if err := waitTimeout(t, op, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(op.Buf, reply[chunkHeaderSize+8:]) {
		t.Fatal("the data read is not the data sent")
	}
	return c.Stats().RecvCalls - before
}

func readFull(c net.Conn, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k, err := c.Read(p[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// TestPollReaderLeavesTheNetpoller: the socket the ppoll reader reads is
// in no epoll set of this process (the runtime's would wake a thread at
// each byte that arrives, for a read no goroutine waits on), and Close
// wakes the reader asleep in ppoll on an idle connection.
func TestPollReaderLeavesTheNetpoller(t *testing.T) {
	ts := startServer(t, Export{Backend: NewMemory(1 << 20)})
	ctx := t.Context()
	c, err := Dial(ctx, ts.uri, ClientOptions{Reader: ReaderPoll})
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(c.Conn().file.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	for _, ino := range epollWatches(t) {
		if ino == st.Ino {
			t.Errorf("the ppoll reader's socket (inode %d) is watched by an epoll set", st.Ino)
		}
	}
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return in 10 s with the reader asleep in ppoll")
	}
}

// epollWatches lists the inodes of the files every epoll set of this
// process watches (the ino: of the tfd lines of /proc/self/fdinfo of each
// eventpoll fd): a socket whose descriptor was duplicated is one inode
// under two numbers.
func epollWatches(t *testing.T) []uint64 {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var inos []uint64
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); l != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			_, ino, ok := strings.Cut(line, " ino:")
			if !strings.HasPrefix(line, "tfd:") || !ok {
				continue
			}
			if n, err := strconv.ParseUint(strings.Fields(ino)[0], 16, 64); err == nil {
				inos = append(inos, n)
			}
		}
	}
	if len(inos) == 0 {
		t.Fatal("no epoll set watches anything here: the check would pass unrun")
	}
	return inos
}

// TestParkedReaderSeesHangup: on one processor a ppoll reader with
// nothing in flight parks without a system call (awaitRequest), so it no
// longer sees a hang-up itself; Lost looks, so that a paused load still
// learns that its server went away.
func TestParkedReaderSeesHangup(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	sock := filepath.Join(testbin.ShortDir(t), "s.sock")
	ln, err := ListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- (&Server{Exports: []Export{{Backend: NewMemory(1 << 20)}}}).Serve(ctx, ln) }()
	c, err := Dial(ctx, URI{Transport: "unix", Socket: sock}, ClientOptions{Reader: ReaderPoll})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	op := NewOp()
	op.Cmd, op.Buf = CmdRead, make([]byte, 4096)
	if err := c.Start(op); err != nil {
		t.Fatal(err)
	}
	if err := waitTimeout(t, op, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	parked := func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.parked }
	for deadline := time.Now().Add(10 * time.Second); !parked(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the reader with nothing in flight did not park")
		}
	}
	cancel() // the server closes its connections
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); c.Lost() == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Lost says nothing of a server that hung up while the reader was parked")
		}
	}
	if c.Lost() == ErrClientClosed {
		t.Fatalf("Lost: %v, want the hang-up", c.Lost())
	}
}
