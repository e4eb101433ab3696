package clientrun

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestTempDirRemovesStaleOnes: a new temporary directory first removes
// the old ones of its name whose lock nobody holds (their owner and its
// janitor were killed: issue 33 found nbdscope-NNN left after kill -9),
// and spares one whose owner lives (its lock held), one just made, names
// of another shape and an older nbdscope's, which it cannot tell unused; its own is private, locked and removed by
// remove.
func TestTempDirRemovesStaleOnes(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	old := time.Now().Add(-2 * staleAge)
	mk := func(name string, age time.Time) string {
		d := filepath.Join(tmp, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(d, age, age); err != nil {
			t.Fatal(err)
		}
		return d
	}
	stale, held, fresh := mk("nbtest-111-lk", old), mk("nbtest-222-lk", old), mk("nbtest-333-lk", time.Now())
	other, older := mk("nbtest-x1-lk", old), mk("nbtest-444", old) // another shape; an older nbdscope's, never locked
	lock, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	dir, remove, err := TempDir("nbtest-")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale %s is still there", stale)
	}
	for _, d := range []string{held, fresh, other, older} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the new directory %s: %v, %v", dir, fi, err)
	}
	if f, err := os.Open(dir); err == nil {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			t.Errorf("the new directory %s is not locked", dir)
		}
		f.Close()
	}
	remove()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("remove left %s", dir)
	}
}
