package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"nbdscope/ui"
)

// TestStoreSpecialFilesRefusedAtOnce: a FIFO with no writer and a symlink
// to /dev/zero in the runs and the presets directories do not stall a
// command: the lists warn, naming each, and go on; runs show, presets
// show and run --preset refuse one as a bad input (exit 2) at once (issue
// 33: the FIFO hung runs list, runs show, presets list and run --preset;
// runs show of the symlink read 1 GiB of zeros first). Each command runs
// with a deadline, so that this test fails, not hangs, where they block.
func TestStoreSpecialFilesRefusedAtOnce(t *testing.T) {
	home := storeCmdHome(t)
	for _, d := range []string{"runs", "presets"} {
		dir := filepath.Join(home, d)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.json")); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		code      int
		out, errs string
	}
	run := func(args ...string) result {
		t.Helper()
		ch := make(chan result, 1)
		go func() {
			code, out, errs := runApp(t, args...)
			ch <- result{code, out, errs}
		}()
		select {
		case r := <-ch:
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("%v did not return within 10 s", args)
			return result{}
		}
	}
	for _, args := range [][]string{{"runs", "list"}, {"presets", "list"}} {
		r := run(args...)
		for _, f := range []string{"fifo.json: a named pipe (FIFO), not a regular file", "zero.json: a symlink to a character device, not a regular file"} {
			if !strings.Contains(r.errs, f) {
				t.Errorf("%v: stderr %q does not warn %q", args, r.errs, f)
			}
		}
	}
	for _, args := range [][]string{
		{"runs", "show", "zero"}, {"runs", "show", "fifo"},
		{"presets", "show", "fifo"}, {"presets", "show", "zero"},
		{"run", "-t", "1", "--preset", "fifo"}, {"run", "-t", "1", "--preset", "zero"},
	} {
		r := run(args...)
		if r.code != exitUsage || !strings.Contains(r.errs, "not a regular file") {
			t.Errorf("%v: exit %d, stderr %q; want 2, not a regular file", args, r.code, r.errs)
		}
	}
	// The explorer's pickers (p, b) list the rest and say what they skipped.
	var o ui.Options
	testApp().tuiPresets(&o)
	for what, load := range map[string]func() (int, error){
		"presets": func() (int, error) { items, err := o.LoadPresets(); return len(items), err },
		"runs":    func() (int, error) { items, err := o.LoadRuns(); return len(items), err },
	} {
		ch := make(chan error, 1)
		go func() { _, err := load(); ch <- err }()
		select {
		case err := <-ch:
			if err == nil || !strings.Contains(err.Error(), "fifo.json: a named pipe (FIFO)") || !strings.Contains(err.Error(), "zero.json: a symlink to a character device") {
				t.Errorf("the %s picker: %v, want both files named", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the %s picker did not load within 10 s", what)
		}
	}
}
