package nbd

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"nbdscope/internal/testbin"
)

// dirNames lists dir, so a test can see that the private bind directory
// is gone and nothing else was left.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestListenUnixPrivate: even under umask 0 the socket is 0600, the
// private directory it was bound in is gone, clients reach it at path,
// and Close removes it (twice is harmless).
func TestListenUnixPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := testbin.ShortDir(t)
	p := filepath.Join(dir, "s.sock")
	ln, err := ListenUnix(p)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Umask(old)
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v %v, want a socket with mode 0600", fi.Mode(), err)
	}
	if names := dirNames(t, dir); len(names) != 1 || names[0] != "s.sock" {
		t.Fatalf("directory holds %v, want only s.sock", names)
	}
	if ln.Addr().String() != p {
		t.Fatalf("Addr %s, want %s", ln.Addr(), p)
	}
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("unix", p)
	if err != nil {
		t.Fatalf("dial the renamed socket: %v", err)
	}
	c.Close()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("left after Close: %v", names)
	}
}

// TestListenUnixReplacesStaleSocket: a socket nobody answers on is
// replaced; a file that took the socket's place after Listen is not
// removed by Close.
func TestListenUnixReplacesStaleSocket(t *testing.T) {
	dir := testbin.ShortDir(t)
	p := filepath.Join(dir, "s.sock")
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	ln, err := ListenUnix(p)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	if names := dirNames(t, dir); len(names) != 1 || names[0] != "s.sock" {
		t.Fatalf("directory holds %v, want only s.sock", names)
	}
	os.Remove(p)
	if err := os.WriteFile(p, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if b, _ := os.ReadFile(p); string(b) != "precious" {
		t.Fatal("Close removed a file that was not its socket")
	}
}

// TestListenUnixPathTooLong: a path the private bind cannot hold is a
// clear error and leaves nothing behind.
func TestListenUnixPathTooLong(t *testing.T) {
	dir := testbin.ShortDir(t)
	// The name itself too long for connect.
	p := filepath.Join(dir, strings.Repeat("x", 110))
	if _, err := ListenUnix(p); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Fatalf("%d-byte path: err = %v, want a too-long error", len(p), err)
	}
	// A name that fits in a directory so long that the private path
	// (deep/.nbdscopeNNNN/s) does not.
	deep := filepath.Join(dir, strings.Repeat("d", 100-len(dir)))
	if err := os.Mkdir(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	p = filepath.Join(deep, "s")
	if _, err := ListenUnix(p); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Fatalf("%d-byte path in a %d-byte directory: err = %v, want a too-long error", len(p), len(deep), err)
	}
	if names := dirNames(t, deep); len(names) != 0 {
		t.Fatalf("left behind: %v", names)
	}
}
