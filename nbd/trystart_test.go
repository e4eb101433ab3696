package nbd

import (
	"io"
	"testing"
	"time"
)

// TryStart is what a client's reader goroutine may send with: it must come
// back at once, having sent nothing, both while another request is being
// sent (a WRITE blocked on a peer that stopped reading) and while the
// socket is full; and it must send the whole header when it can.
func TestTryStartNeverWaits(t *testing.T) {
	a, b := socketPair(t)
	defer b.Close()
	ca, err := NewConn(a)
	if err != nil {
		t.Fatal(err)
	}
	cl := newClient(ca, ExportInfo{Size: 1 << 30})
	defer func() {
		cl.fail(ErrClientClosed)
		<-cl.rdon
	}()

	// A WRITE larger than any socket buffer: its Start holds the sending
	// lock, blocked, since the peer reads nothing yet.
	w := NewOp()
	w.Cmd, w.Buf = CmdWrite, make([]byte, 8<<20)
	started := make(chan error, 1)
	go func() { started <- cl.Start(w) }()
	deadline := time.Now().Add(5 * time.Second)
	for a := ca.Stats(); a.SendEAGAIN == 0; a = ca.Stats() {
		if time.Now().After(deadline) {
			t.Fatal("the WRITE never filled the socket")
		}
		time.Sleep(time.Millisecond)
	}

	r := NewOp()
	r.Cmd, r.Buf = CmdRead, make([]byte, 4096)
	try := func(what string) bool {
		t.Helper()
		done := make(chan bool, 1)
		go func() {
			sent, err := cl.TryStart(r)
			if err != nil {
				t.Error(err)
			}
			done <- sent
		}()
		return within(t, done, 5*time.Second, "TryStart returning ("+what+")")
	}
	if try("a WRITE holds the socket") {
		t.Fatal("TryStart sent while a WRITE was being sent")
	}
	if n := pending(cl); n != 1 {
		t.Fatalf("%d requests in flight after a TryStart that sent nothing, want 1 (the WRITE)", n)
	}

	// Let the WRITE go: read its header and payload.
	got := make([]byte, requestSize+len(w.Buf))
	if _, err := io.ReadFull(b, got); err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatal(err)
	}

	// Now fill the socket with nothing holding the lock: TryStart still
	// must not wait, and must not send part of a header either.
	junk := make([]byte, 64<<10)
	for {
		n, err := ca.TryWrite(junk)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if try("the socket is full") {
		t.Fatal("TryStart sent into a full socket")
	}
	queued := ca.Stats().SendBytes - uint64(len(got))
	if _, err := io.ReadFull(b, make([]byte, queued)); err != nil {
		t.Fatal(err)
	}

	// With room, the READ goes out whole.
	if !try("the socket has room") {
		t.Fatal("TryStart did not send with an idle socket")
	}
	h := make([]byte, requestSize)
	if _, err := io.ReadFull(b, h); err != nil {
		t.Fatal(err)
	}
	req, err := ParseRequest(h)
	if err != nil || req.Type != CmdRead || req.Length != 4096 {
		t.Fatalf("sent %+v, %v; want a READ of 4096", req, err)
	}
}

func pending(cl *Client) int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return len(cl.ops)
}
