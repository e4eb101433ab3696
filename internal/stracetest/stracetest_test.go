package stracetest

import (
	"os"
	"path/filepath"
	"testing"
)

// A table as strace 6 writes it with -c -U name,calls,errors, and the
// tolerance's edges.
func TestReadAndWithin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.txt")
	table := "syscall            calls    errors\n" +
		"------------------ -------- --------\n" +
		"recvmsg               45243      3021\n" +
		"sendmsg                2062\n" +
		"recvfrom                 10         1\n" +
		"------------------ -------- --------\n" +
		"total                 47315      3022\n"
	if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Sum("recvmsg", "recvfrom", "readv"); got != (Count{45253, 3022}) {
		t.Errorf("receive = %+v, want 45253 calls, 3022 errors", got)
	}
	if got := s["sendmsg"]; got != (Count{2062, 0}) || len(s) != 3 {
		t.Errorf("sendmsg = %+v of %d lines, want 2062 calls of 3 lines", got, len(s))
	}
	os.WriteFile(path, []byte("syscall calls errors\n---- ----\n"), 0o644)
	if _, err := Read(path); err == nil {
		t.Error("an empty table read without an error")
	}
	for _, c := range []struct {
		a, b uint64
		want bool
	}{{1000, 1010, true}, {1010, 1000, true}, {1000, 1011, false}, {0, 1, true}, {2, 4, false}} {
		if got := Within1Pct(c.a, c.b); got != c.want {
			t.Errorf("Within1Pct(%d, %d) = %v", c.a, c.b, got)
		}
	}
}
