package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingImageRefused: a file: backend whose image does not exist is
// refused by run, sweep, the explorer and serve (with or without --size)
// with exit 2 before anything runs, saying how to create one; no file
// appears (issue 21: run made a 64 GiB sparse file and exited 0).
func TestMissingImageRefused(t *testing.T) {
	storeCmdHome(t)
	t.Setenv(asBinaryEnv, "1") // should anything start, its children are this binary
	img := filepath.Join(t.TempDir(), "nope.img")
	for _, args := range [][]string{
		{"run", "--backend", "file:" + img, "--duration", "1s"},
		{"run", "--backend-b", "file:" + img, "--size-b", "1g", "--duration", "1s"},
		{"sweep", "--backend", "file:" + img, "--bytes", "64m", "--repeat", "1", "--sndbuf", "default"},
		{"--backend", "file:" + img},
		{"serve", "--backend", "file:" + img, "--size", "1g", "-k", filepath.Join(t.TempDir(), "s.sock")},
		{"serve", "--backend", "file:" + img, "-k", filepath.Join(t.TempDir(), "s.sock")},
	} {
		run := runApp
		if args[0] == "serve" {
			run = runBin // should it serve, it would until a signal
		}
		code, _, errs := run(t, args...)
		want := "no such image; nbdscope never creates an image: create it with `truncate -s 1G " + img + "` or `qemu-img create"
		if code != exitUsage || !strings.Contains(errs, want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", args, code, errs, want)
		}
		if _, err := os.Stat(img); err == nil {
			t.Fatalf("%q created %s", args, img)
		}
	}
}
