package nbd

import (
	"net"
	"path/filepath"
	"runtime"
	"testing"
)

// Both ends of a data connection, the dialled and the accepted, carry
// SO_NOSIGPIPE on macOS (compiled for darwin by GOOS=darwin go vet); on
// other systems there is no such option and none is reported.
func TestDataSocketsHaveNoSigPipe(t *testing.T) {
	ln, err := ListenUnix(filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	dialled, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer dialled.Close()
	server := <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	defer server.Close()
	for name, nc := range map[string]net.Conn{"dialled": dialled, "accepted": server} {
		c, err := NewConn(nc)
		if err != nil {
			t.Fatal(err)
		}
		set, err := c.NoSigPipeSet()
		if err != nil {
			t.Fatal(err)
		}
		if want := runtime.GOOS == "darwin"; set != want {
			t.Fatalf("%s socket: SO_NOSIGPIPE %v, want %v", name, set, want)
		}
	}
}
