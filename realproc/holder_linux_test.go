package realproc

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"nbdscope/nbd"
)

// TestFindServerRenamedSocket: the server of a unix --target is found by
// the file its listener is bound to, so a socket bound in a private
// directory and renamed into place (nbd.ListenUnix: nbdscope serve -k)
// is found at its path, where looking for the bound name said "nothing
// listens on … here". A socket bound at the path itself is found too,
// and a path nothing listens on is not.
func TestFindServerRenamedSocket(t *testing.T) {
	dir := t.TempDir()
	renamed := filepath.Join(dir, "serve.sock")
	ln, err := nbd.ListenUnix(renamed)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	direct := filepath.Join(dir, "direct.sock")
	dl, err := net.Listen("unix", direct)
	if err != nil {
		t.Fatal(err)
	}
	defer dl.Close()
	for _, path := range []string{renamed, direct} {
		h, err := FindServer("nbd+unix:///?socket=" + path)
		if err != nil || h.PID != os.Getpid() {
			t.Errorf("%s: %+v, %v; want this process (%d)", filepath.Base(path), h, err, os.Getpid())
		}
	}
	if h, err := FindServer("nbd+unix:///?socket=" + filepath.Join(dir, "none.sock")); err == nil {
		t.Errorf("a path nothing listens on: %+v", h)
	}
}
