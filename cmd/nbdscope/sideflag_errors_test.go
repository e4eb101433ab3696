package main

import (
	"strings"
	"testing"
)

// TestPerSideFlagErrorsNameTheFlagTyped: a bad value of a per-side flag
// (or of its base, or its short form) is refused with exit 2 and one line
// that names the flag as typed, once, with the value once: a bad
// --sndbuf-b was reported as -w/--sndbuf's ("-w/--sndbuf: sndbuf: buffer
// "zz": …"), a bad --server-b named server three times, and a quoting
// error the command twice.
func TestPerSideFlagErrorsNameTheFlagTyped(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sndbuf-b", "zz"}, `--sndbuf-b "zz": want default, macos or a size like 64k or 2m`},
		{[]string{"--client-rcvbuf-a", "1"}, `--client-rcvbuf-a "1": want a size between 1k and 1g`},
		{[]string{"-w", "zz"}, `-w/--sndbuf "zz": want default, macos or a size like 64k or 2m`},
		{[]string{"--connections-a", "0"}, `--connections-a "0": want 1…64`},
		{[]string{"--size-b", "x"}, `--size-b "x": does not start with a number`},
		{[]string{"--hash-threads-b", "0"}, `--hash-threads-b "0": want auto or 1…64`},
		{[]string{"--server-b", "nosuch"}, `--server-b "nosuch": put {socket} where the command takes the address to listen on (transport unix)`},
		{[]string{"--transport-b", "tcp", "--server-b", "qemu-nbd -k {socket}"},
			`--server-b "qemu-nbd -k {socket}": put {port} where the command takes the address to listen on (transport tcp)`},
		{[]string{"--target-a", "foo://x"}, `--target-a "foo://x": not an NBD URI: unknown scheme "foo": want nbd:// or nbd+unix://`},
		{[]string{"--exec-b", "true", "--target-b", "nbd://localhost"},
			`--exec-b "true": a side with a command runs against its own spawned server, not a --target`},
		// A quoting error names the flag once, the command once, and
		// where the quote opens (it said the command twice, not where).
		{[]string{"--exec-b", "qemu-img 'unclosed"}, `--exec-b "qemu-img 'unclosed": the ' at character 10 opens a quote that is never closed`},
		{[]string{"--server-b", "nbdkit 'x"}, `--server-b "nbdkit 'x": the ' at character 8 opens a quote that is never closed`},
		{[]string{"--exec-a", `qemu-img "x`}, `--exec-a "qemu-img \"x": the " at character 10 opens a quote that is never closed`},
		{[]string{"--exec-b", `qemu-img x\`}, `--exec-b "qemu-img x\\": the \ at character 11 ends the line, with nothing to quote`},
		// Refused before anything runs (issue 33: a missing program
		// exited 1 after side A had run for 2 s; a command without its
		// placeholder ran, connected nowhere and moved nothing).
		{[]string{"--exec-b", "nbdscope-no-such-client {uri}"}, `--exec-b "nbdscope-no-such-client {uri}": nbdscope-no-such-client is not on PATH`},
		{[]string{"--exec-a", "/nonexistent/qemu-img {uri}"}, `--exec-a "/nonexistent/qemu-img {uri}": /nonexistent/qemu-img is not an executable file`},
		{[]string{"--server-b", "nbdscope-no-such-server -k {socket}"}, `--server-b "nbdscope-no-such-server -k {socket}": nbdscope-no-such-server is not on PATH`},
		{[]string{"--exec-b", "true"}, `--exec-b "true": put {uri} or {socket} where the command takes the address`},
	} {
		args := append([]string{"run", "-t", "1"}, c.args...)
		code, _, stderr := runBin(t, args...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || first != "nbdscope: "+c.want {
			t.Errorf("%q: exit %d, %q; want exit %d and %q", c.args, code, first, exitUsage, "nbdscope: "+c.want)
		}
	}
}

// TestSweepExecRefusedUpFront: sweep --exec with a program not on PATH,
// or without {uri} or {socket}, is refused with exit 2 before a server
// starts; a --shell command's program is sh's to find and is not checked.
func TestSweepExecRefusedUpFront(t *testing.T) {
	storeCmdHome(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--exec", "nbdscope-no-such-client {uri}"}, `sweep: --exec "nbdscope-no-such-client {uri}": nbdscope-no-such-client is not on PATH`},
		{[]string{"--exec", "true"}, `sweep: --exec "true": put {uri} or {socket} where the command takes the address`},
		{[]string{"--shell", "--exec", "true"}, `sweep: --exec "true": put {uri} or {socket} where the command takes the address`},
	} {
		args := append([]string{"sweep", "--sndbuf", "default", "--repeat", "1", "--bytes", "64m"}, c.args...)
		code, _, stderr := runBin(t, args...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || first != "nbdscope: "+c.want {
			t.Errorf("%q: exit %d, %q; want exit %d and %q", c.args, code, first, exitUsage, "nbdscope: "+c.want)
		}
	}
}
