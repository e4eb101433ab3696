package realproc

import (
	"io"
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
	for name, listen := range map[string]func(path string) (io.Closer, error){
		"renamed into place": func(path string) (io.Closer, error) { return nbd.ListenUnix(path) },
		"bound at its path":  func(path string) (io.Closer, error) { return net.Listen("unix", path) },
	} {
		path := filepath.Join(dir, name+".sock")
		ln, err := listen(path)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		if h, err := FindServer("nbd+unix:///?socket=" + path); err != nil || h.PID != os.Getpid() {
			t.Errorf("%s: %+v, %v; want this process (%d)", name, h, err, os.Getpid())
		}
	}
	if h, err := FindServer("nbd+unix:///?socket=" + filepath.Join(dir, "none.sock")); err == nil {
		t.Errorf("a path nothing listens on: %+v", h)
	}
}
