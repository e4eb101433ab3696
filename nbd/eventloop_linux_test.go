package nbd

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

// TestEventLoopTurnsOnEAGAIN: with the event loop on, each receive call
// that finds the socket empty is followed by one turn of qemu's loop (an
// eventfd written twice, a ppoll, the read that clears it: per EAGAIN, as
// perf stat counted for qemu-img convert, one read and two writes of its
// notifiers), and the reply still arrives whole; with it off, none. The
// reply is sent in two parts, the second only once the reader has found
// the socket empty, so each run has an EAGAIN.
func TestEventLoopTurnsOnEAGAIN(t *testing.T) {
	for _, on := range []bool{true, false} {
		eagain, turns := splitReplyTurns(t, on)
		if eagain == 0 {
			t.Fatalf("loop %v: no EAGAIN between the two parts of the reply", on)
		}
		want := uint64(0)
		if on {
			want = eagain
		}
		if turns != want {
			t.Errorf("loop %v: %d turns for %d EAGAIN, want %d", on, turns, eagain, want)
		}
	}
}

func splitReplyTurns(t *testing.T, loop bool) (eagain, turns uint64) {
	a, b := socketPair(t)
	defer b.Close()
	c, err := NewConn(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.usePollWait(); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.SetEventLoop(loop); err != nil || !ok {
		t.Fatalf("SetEventLoop(%v) on a polled connection: %v, %v", loop, ok, err)
	}
	cl := newClient(c, ExportInfo{Size: 1 << 20, Structured: true})
	op := NewOp()
	op.Cmd, op.Buf = CmdRead, make([]byte, 64<<10)
	if err := cl.Start(op); err != nil {
		t.Fatal(err)
	}
	var req [requestSize]byte
	b.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := readFull(b, req[:]); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, chunkHeaderSize+8+len(op.Buf))
	putChunkHeader(reply, ChunkFlagDone, ChunkOffsetData, binary.BigEndian.Uint64(req[8:16]), uint32(8+len(op.Buf)))
	for i := range reply[chunkHeaderSize+8:] {
		reply[chunkHeaderSize+8+i] = byte(i * 7)
	}
	half := chunkHeaderSize + 8 + len(op.Buf)/2
	if _, err := b.Write(reply[:half]); err != nil {
		t.Fatal(err)
	}
	// The reader takes the first half and finds the socket empty.
	for deadline := time.Now().Add(10 * time.Second); c.Stats().RecvEAGAIN == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the reader did not find the socket empty in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := b.Write(reply[half:]); err != nil {
		t.Fatal(err)
	}
	if err := waitTimeout(t, op, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(op.Buf, reply[chunkHeaderSize+8:]) {
		t.Fatal("the data read is not the data sent")
	}
	b.Close() // the reader ends on EOF, with no turn: the counts are final
	cl.Close()
	return c.Stats().RecvEAGAIN, c.LoopTurns()
}
