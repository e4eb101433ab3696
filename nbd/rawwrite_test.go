package nbd

import (
	"bytes"
	"io"
	"testing"

	"golang.org/x/sys/unix"
)

// writeNoWait sends every non-empty buffer in order in one call, takes
// what a full socket takes and then says EAGAIN (never waits), and holds
// no caller buffer after it returns.
func TestWriteNoWait(t *testing.T) {
	a, b := socketPair(t)
	defer a.Close()
	defer b.Close()
	c, err := NewConn(a)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := a.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	call := func(bufs [][]byte) (n int, err error) {
		raw.Control(func(fd uintptr) { n, err = c.writeNoWait(fd, bufs) })
		return n, err
	}
	n, err := call([][]byte{[]byte("head"), nil, []byte("er"), {}, []byte(" payload")})
	if err != nil || n != 14 {
		t.Fatalf("writev: %d, %v; want 14, nil", n, err)
	}
	for _, v := range c.wiov[:cap(c.wiov)] {
		if v.Base != nil {
			t.Fatal("an iovec still points at a caller's buffer")
		}
	}
	got := make([]byte, 14)
	if _, err := io.ReadFull(b, got); err != nil || string(got) != "header payload" {
		t.Fatalf("read %q, %v", got, err)
	}
	if n, err := call([][]byte{[]byte("one")}); err != nil || n != 3 {
		t.Fatalf("write: %d, %v; want 3, nil", n, err)
	}
	big := bytes.Repeat([]byte{0xff}, 8<<20) // more than any default send buffer
	took := 0
	for i := 0; i < 64; i++ {
		n, err := call([][]byte{big, big})
		if err == unix.EAGAIN {
			if took == 0 || took >= 2*len(big) {
				t.Fatalf("EAGAIN after %d bytes, want a full buffer's worth first", took)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		took += n
	}
	t.Fatalf("%d bytes taken and no EAGAIN: the call waited or the socket never filled", took)
}
