package presets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it does not return within d: a
// store read that blocks (a FIFO with no writer) makes the test fail
// instead of hanging it. The goroutine is left blocked then; the test
// binary's end reaps it.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v (blocked on a FIFO or reading a device?)", what, d)
	}
}

// specialFiles puts a FIFO with no writer and a symlink to /dev/zero in
// dir as NAME.json files, next to one good file written by good.
func specialFiles(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.json")); err != nil {
		t.Fatal(err)
	}
}

// TestStoreSkipsSpecialFiles: a FIFO with no writer and a symlink to
// /dev/zero in each store are refused at once, each named with what it
// is, and the store's good files still list (issue 33: the FIFO hung
// runs list, presets list, run --preset and the explorer's p; the
// /dev/zero symlink was read to the 1 GiB limit, 9.5 s and 2.1 GB).
func TestStoreSkipsSpecialFiles(t *testing.T) {
	s := testStore(t)
	specialFiles(t, s.RunDir)
	specialFiles(t, s.PresetDir)
	if err := s.SaveRun("good", testReport(), false); err != nil {
		t.Fatal(err)
	}
	if err := s.SavePreset(customPreset("mine"), false); err != nil {
		t.Fatal(err)
	}
	wantNamed := func(what string, errs []error) {
		t.Helper()
		if len(errs) != 2 {
			t.Fatalf("%s: %d errors, want 2 (the FIFO and the symlink): %v", what, len(errs), errs)
		}
		all := errors.Join(errs...).Error()
		for _, want := range []string{"fifo.json: a named pipe (FIFO), not a regular file", "zero.json: a symlink to a character device, not a regular file"} {
			if !strings.Contains(all, want) {
				t.Errorf("%s: errors %q do not say %q", what, all, want)
			}
		}
	}
	within(t, 5*time.Second, "Runs", func() {
		runs, errs := s.Runs()
		if len(runs) != 1 || runs[0].Name != "good" {
			t.Errorf("Runs: %+v, want the good run alone", runs)
		}
		wantNamed("Runs", errs)
	})
	within(t, 5*time.Second, "Presets", func() {
		ps, errs := s.Presets()
		if ps[len(ps)-1].Name != "mine" {
			t.Errorf("Presets: the last is %q, want the user's good one", ps[len(ps)-1].Name)
		}
		wantNamed("Presets", errs)
	})
	for _, name := range []string{"fifo", "zero"} {
		within(t, 5*time.Second, "Run("+name+")", func() {
			if _, err := s.Run(name); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), name+".json") {
				t.Errorf("Run(%s): %v, want ErrInvalid naming the file", name, err)
			}
		})
		within(t, 5*time.Second, "Preset("+name+")", func() {
			if _, err := s.Preset(name); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), name+".json") {
				t.Errorf("Preset(%s): %v, want ErrInvalid naming the file", name, err)
			}
		})
	}
}

// TestStoreRefusesOversizedRunUnread: a run file over the limit (sparse)
// is refused from its size, before it is read.
func TestStoreRefusesOversizedRunUnread(t *testing.T) {
	s := testStore(t)
	if err := os.MkdirAll(s.RunDir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(s.RunDir, "huge.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"version": 1, "name": "huge"`)
	if err := f.Truncate(maxRunFile + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = s.Run("huge")
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, errTooLarge) || !strings.Contains(err.Error(), "not read") {
		t.Errorf("Run(huge): %v, want refused unread as too large", err)
	}
}
