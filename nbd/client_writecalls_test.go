package nbd

import (
	"fmt"
	"net"
	"testing"
)

// A WRITE's large payload goes in a send call of its own on a unix
// socket, after its header's, so the kernel puts it at the start of its
// buffers and neither copy (the client's in, the server's out) runs askew
// (requestCalls). Small payloads, and every payload on TCP, go out with
// the header in one call.
func TestRequestCallsStartLargePayloads(t *testing.T) {
	hdr := make([]byte, requestSize)
	cases := []struct {
		name     string
		vecs     [][]byte
		alignMin int
		want     string
	}{
		{"2 MiB write, aligned", [][]byte{hdr, make([]byte, 2<<20)}, alignedPayloadMin, "[28][2097152]"},
		{"2 MiB write, gathered (tcp)", [][]byte{hdr, make([]byte, 2<<20)}, 0, "[28 2097152]"},
		{"at the size", [][]byte{hdr, make([]byte, alignedPayloadMin)}, alignedPayloadMin,
			fmt.Sprintf("[28][%d]", alignedPayloadMin)},
		{"just below the size", [][]byte{hdr, make([]byte, alignedPayloadMin-1)}, alignedPayloadMin,
			fmt.Sprintf("[28 %d]", alignedPayloadMin-1)},
		{"no payload", [][]byte{hdr}, alignedPayloadMin, "[28]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first, second := requestCalls(tc.vecs, tc.alignMin)
			calls := [][][]byte{first}
			if len(second) > 0 {
				calls = append(calls, second)
			}
			if got := shape(calls); got != tc.want {
				t.Errorf("calls %s, want %s", got, tc.want)
			}
		})
	}
}

// The client splits large WRITEs on a unix socket only: TCP fills its last
// buffer first, at whatever offset the call before left, so a call of its
// own would align nothing and only cost a call.
func TestClientAlignsWritesOnUnixOnly(t *testing.T) {
	a, b := socketPair(t)
	defer b.Close()
	ca, err := NewConn(a)
	if err != nil {
		t.Fatal(err)
	}
	cu := newClient(ca, ExportInfo{Size: 1 << 20})
	defer func() { cu.fail(ErrClientClosed); <-cu.rdon }()
	if cu.alignMin != alignedPayloadMin {
		t.Errorf("unix socket: alignMin %d, want %d", cu.alignMin, alignedPayloadMin)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			c = nil
		}
		accepted <- c
	}()
	tc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if peer := <-accepted; peer != nil {
		defer peer.Close()
	}
	ct, err := NewConn(tc)
	if err != nil {
		t.Fatal(err)
	}
	cl := newClient(ct, ExportInfo{Size: 1 << 20})
	defer func() { cl.fail(ErrClientClosed); <-cl.rdon }()
	if cl.alignMin != 0 {
		t.Errorf("tcp socket: alignMin %d, want 0", cl.alignMin)
	}
}
