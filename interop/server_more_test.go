package interop

// More real clients against `nbdscope serve`: the file backend, many
// extents, shutdown under load, and BLOCK_STATUS of unaligned ranges.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/internal/testbin"
	"nbdscope/nbd"
)

// fsHasHoles reports whether the file system holding path reports a hole
// (SEEK_HOLE) before off.
func fsHasHoles(t testing.TB, path string, off int64) bool {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := unix.Seek(int(f.Fd()), 0, unix.SEEK_HOLE)
	return err == nil && h < off
}

// TestServeFileBackend: --backend file:IMG --size 0 serves an existing
// sparse image: nbdinfo --map shows its holes, qemu-io writes and zeroes
// land in the file, nbdcopy copies it out; --read-only leaves it untouched.
func TestServeFileBackend(t *testing.T) {
	need(t, "nbdinfo", "qemu-io", "nbdcopy")
	dir := t.TempDir()
	img := filepath.Join(dir, "disk.img")
	const size = 16 * mib
	want := writeRandomImage(t, img, size, 4) // MiB 3, 7, 11 and 15 are holes

	s := startServe(t, "--backend", "file:"+img, "--size", "0")
	if r := mustRun(t, "", "nbdinfo", "--size", s.uri); strings.TrimSpace(r.out) != "16777216" {
		t.Fatalf("want the file's size:\n%s", r)
	}
	r := mustRun(t, "", "nbdinfo", "--map", s.uri)
	exts := parseMap(t, r, size)
	for _, e := range exts {
		if e.typ&2 != 0 && !bytes.Equal(want[e.off:e.off+e.length], make([]byte, e.length)) {
			t.Errorf("extent %v is reported zero but holds data", e)
		}
	}
	if fsHasHoles(t, img, size) {
		found := false
		for _, e := range exts {
			if e.off <= 3*mib && e.off+e.length >= 4*mib && e.typ == 3 {
				found = true
			}
		}
		if !found {
			t.Errorf("the hole at [3 MiB, 4 MiB) is not reported as hole,zero:\n%s", r)
		}
	}

	mustRun(t, "", "qemu-io", "-f", "raw",
		"-c", "write -P 0xab 1M 1M", "-c", "write -z 5M 1M", "-c", "write -P 0xcd 3M 4k",
		"-c", "write -P 0xef 100 1000", "-c", "flush", s.uri)
	copy(want[1*mib:2*mib], bytes.Repeat([]byte{0xab}, mib))
	clear(want[5*mib : 6*mib])
	copy(want[3*mib:], bytes.Repeat([]byte{0xcd}, 4096))
	copy(want[100:1100], bytes.Repeat([]byte{0xef}, 1000))
	sameBytes(t, "disk.img after qemu-io", want, readFile(t, img))

	out := filepath.Join(dir, "out.img")
	mustRun(t, "", "nbdcopy", s.uri, out)
	sameBytes(t, "nbdcopy of the file export", want, readFile(t, out))
	s.stop(t, false)

	ro := startServe(t, "--backend", "file:"+img, "--size", "0", "--read-only")
	before := sha256.Sum256(readFile(t, img))
	if r := run(t, "", "qemu-io", "-f", "raw", "-c", "write -P 0x11 0 4k", ro.uri); r.code == 0 {
		t.Errorf("write to a read-only file export succeeded:\n%s", r)
	}
	c := dialT(t, ro.uri, nbd.ClientOptions{})
	if _, err := c.WriteAt(make([]byte, 4096), 0); err == nil {
		t.Errorf("Go client WRITE to a read-only file export succeeded")
	}
	if err := c.Trim(0, 1<<20); err == nil {
		t.Errorf("Go client TRIM of a read-only file export succeeded")
	}
	if sha256.Sum256(readFile(t, img)) != before {
		t.Errorf("the read-only export changed the file")
	}
}

// TestServeManyExtents: 2048 alternating 64 KiB data/hole runs (more than
// fit in one BLOCK_STATUS reply of the server) copied in by qemu-img show
// exactly in nbdinfo --map, and nbdcopy (which copies by extents) gets
// every byte back.
func TestServeManyExtents(t *testing.T) {
	need(t, "qemu-img", "nbdinfo", "nbdcopy")
	const size = 128 * mib
	dir := t.TempDir()
	src := filepath.Join(dir, "alt.img")
	want := make([]byte, size)
	for off := 0; off < size; off += 128 << 10 {
		copy(want[off:off+64<<10], bytes.Repeat([]byte{byte(off>>17) | 1}, 64<<10))
	}
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(size)
	for off := 0; off < size; off += 128 << 10 {
		if _, err := f.WriteAt(want[off:off+64<<10], int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()

	s := startServe(t, "--size", "128m")
	mustRun(t, "", "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", src, s.uri)
	r := mustRun(t, "", "nbdinfo", "--map", s.uri)
	exts := parseMap(t, r, size)
	if len(exts) != 2048 {
		t.Fatalf("%d extents, want 2048 alternating data/hole", len(exts))
	}
	for i, e := range exts {
		if wantTyp := 3 * (i % 2); e.length != 64<<10 || e.typ != wantTyp {
			t.Fatalf("extent %d = %v, want 64 KiB of type %d", i, e, wantTyp)
		}
	}
	out := filepath.Join(dir, "out.img")
	mustRun(t, "", "nbdcopy", s.uri, out)
	sameBytes(t, "nbdcopy of 2048 extents", want, readFile(t, out))
}

// TestServeShutdownBusy: SIGTERM while nbdcopy streams over 4 connections,
// a Go client has reads in flight, another sits idle and a raw connection
// is stuck in the handshake: the server exits 0 within 5 s and removes its
// socket; every client sees an error instead of hanging.
func TestServeShutdownBusy(t *testing.T) {
	need(t, "nbdcopy")
	s := startServe(t, "--backend", "null", "--size", "64g")

	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cp := exec.CommandContext(ctx, "nbdcopy", "--threads=4", "--connections=4", s.uri, "null:")
	var cpOut testbin.SyncBuffer
	cp.Stdout, cp.Stderr = &cpOut, &cpOut
	if err := cp.Start(); err != nil {
		t.Fatal(err)
	}
	cpDone := make(chan error, 1)
	go func() { cpDone <- cp.Wait() }()

	idle := dial(t, s.uri, nbd.ClientOptions{})
	busy := dial(t, s.uri, nbd.ClientOptions{})
	busyDone := make(chan error, 1)
	go func() {
		buf := make([]byte, 1<<20)
		for off := int64(0); ; off = (off + 1<<20) % (64 << 30) {
			if _, err := busy.ReadAt(buf, off); err != nil {
				busyDone <- err
				return
			}
		}
	}()
	hs, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	greet := make([]byte, 18)
	hs.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(hs, greet); err != nil {
		t.Fatalf("reading the greeting: %v", err)
	}

	time.Sleep(500 * time.Millisecond) // let nbdcopy get going
	select {
	case err := <-cpDone:
		t.Fatalf("nbdcopy ended before the shutdown (%v):\n%s", err, cpOut.String())
	default:
	}
	t0 := time.Now()
	s.stop(t, false)
	t.Logf("server exited %v after SIGTERM", time.Since(t0).Round(time.Millisecond))

	within := func(what string, ch <-chan error) error {
		select {
		case err := <-ch:
			return err
		case <-time.After(10 * time.Second):
			t.Fatalf("%s still running 10 s after the server exited", what)
			return nil
		}
	}
	if err := within("nbdcopy", cpDone); err == nil {
		t.Errorf("nbdcopy of a 64 GiB export succeeded despite the shutdown:\n%s", cpOut.String())
	}
	if err := within("Go client reads", busyDone); err == nil {
		t.Errorf("busy Go client: no error after the shutdown")
	}
	idleDone := make(chan error, 1)
	go func() {
		_, err := idle.ReadAt(make([]byte, 4096), 0)
		idleDone <- err
	}()
	if err := within("idle Go client's READ", idleDone); err == nil {
		t.Errorf("idle Go client: READ succeeded after the shutdown")
	}
	closeDone := make(chan error, 1)
	go func() { idle.Close(); busy.Close(); closeDone <- nil }()
	within("Client.Close", closeDone)
	if n, err := hs.Read(make([]byte, 1)); err == nil {
		t.Errorf("handshake connection still open after the shutdown (read %d bytes)", n)
	}
}

// zeroClaims checks a BLOCK_STATUS answer for [off, off+n) against the
// data: the extents must not describe more than was asked, and every
// extent flagged ZERO must read as zeroes. It returns the violations.
func zeroClaims(t *testing.T, c *nbd.Client, off int64, n uint32, exts []nbd.Extent) []string {
	var bad []string
	pos := off
	for _, e := range exts {
		if e.Flags&nbd.StateZero != 0 {
			got := make([]byte, e.Length)
			if _, err := c.ReadAt(got, pos); err != nil {
				t.Fatalf("READ [%d,+%d): %v", pos, e.Length, err)
			}
			if i := bytes.IndexFunc(got, func(r rune) bool { return r != 0 }); i >= 0 {
				bad = append(bad, fmt.Sprintf("extent [%d,+%d) flags %d claims zeroes, but byte %d reads non-zero", pos, e.Length, e.Flags, pos+int64(i)))
			}
		}
		pos += int64(e.Length)
	}
	if pos > off+int64(n) {
		bad = append(bad, fmt.Sprintf("extents end at %d, beyond the request's end %d", pos, off+int64(n)))
	}
	return bad
}

// TestServeBlockStatusUnaligned: BLOCK_STATUS of a range starting at an
// unaligned offset (no REQ_ONE) must not call data a hole. The first 64 KiB
// hold data, the next 64 KiB are a hole; the query is [100, 128 KiB).
// nbdkit memory is the control.
func TestServeBlockStatusUnaligned(t *testing.T) {
	const off, n = 100, 128<<10 - 100
	probe := func(t *testing.T, uri string) ([]nbd.Extent, []string) {
		c := dialT(t, uri, nbd.ClientOptions{BlockStatus: true})
		if _, err := c.WriteAt(bytes.Repeat([]byte{0x55}, 64<<10), 0); err != nil {
			t.Fatal(err)
		}
		exts, err := c.BlockStatus(off, n, 0)
		if err != nil {
			t.Fatalf("BLOCK_STATUS [%d,+%d): %v", off, n, err)
		}
		return exts, zeroClaims(t, c, off, n, exts)
	}
	t.Run("nbdkit-control", func(t *testing.T) {
		exts, bad := probe(t, unixURI(startNbdkit(t, "memory", "64M"), ""))
		if len(bad) > 0 {
			t.Errorf("nbdkit: extents %+v: %s", exts, strings.Join(bad, "; "))
		}
	})
	t.Run("nbdscope", func(t *testing.T) {
		exts, bad := probe(t, startServe(t).uri)
		if len(bad) > 0 {
			t.Fatalf("BLOCK_STATUS at an unaligned offset misreports data: extents %+v: %s", exts, strings.Join(bad, "; "))
		}
	})
}

// TestServeQuietLog: with -v the server logs protocol errors and refused
// connections; the ordinary ways real tools connect and leave (ABORT after
// --list and -L without reading the ACK, a refused export name, DISC, fio
// never sending DISC) must log nothing (nbd-notes §6.4).
func TestServeQuietLog(t *testing.T) {
	need(t, "nbdinfo", "qemu-nbd", "qemu-img", "qemu-io", "nbdcopy", "fio")
	s := startServe(t, "-v")
	// The socket accepts before the startup lines are written: wait for
	// the last of them, or they would count as logged during use. On a
	// loaded machine they can come seconds after the socket accepts; the
	// wait used to give up after 5 s and go on with an empty start-up, so
	// the start-up lines then counted as logged during use.
	startup := waitOutput(t, s.proc, "listening on ")
	mustRun(t, "", "nbdinfo", "--list", s.uri)
	mustRun(t, "", "qemu-nbd", "-L", "-k", s.sock)
	mustRun(t, "", "nbdinfo", s.uri)
	run(t, "", "nbdinfo", unixURI(s.sock, "nosuch"))
	run(t, "", "nbdinfo", "--size", unixURI(s.sock, "nosuch"))
	mustRun(t, "", "qemu-img", "info", s.uri)
	mustRun(t, "", "qemu-io", "-f", "raw", "-c", "write 0 1M", "-c", "read 0 1M", s.uri)
	mustRun(t, "", "nbdcopy", s.uri, "null:")
	mustRun(t, s.dir, "fio", "--name=q", "--ioengine=nbd", "--uri="+s.uri, "--rw=randwrite",
		"--bs=4k", "--size=8M", "--iodepth=16")
	time.Sleep(200 * time.Millisecond) // let the server notice the last close
	if extra := strings.TrimPrefix(s.out.String(), startup); strings.TrimSpace(extra) != "" {
		t.Errorf("the server logged during ordinary use:\n%s", extra)
	}
}

// TestServeNbdcopyServerToServer: nbdcopy --flush from one nbdscope server
// to another (both multi-conn, sparse 1 GiB): the source's holes become
// WRITE_ZEROES of up to 128 MiB on the destination, which wipe data the
// destination had; qemu-img compare then finds them identical.
func TestServeNbdcopyServerToServer(t *testing.T) {
	need(t, "nbdcopy", "qemu-io", "qemu-img", "nbdinfo")
	a := startServe(t, "--size", "1g")
	b := startServe(t, "--size", "1g")
	mustRun(t, "", "qemu-io", "-f", "raw", "-c", "write -P 0x12 0 1M", "-c", "write -P 0x34 700M 3M", a.uri)
	mustRun(t, "", "qemu-io", "-f", "raw", "-c", "write -P 0x99 300M 1M", b.uri)
	mustRun(t, "", "nbdcopy", "--flush", a.uri, b.uri)
	if r := mustRun(t, "", "qemu-img", "compare", "-f", "raw", "-F", "raw", a.uri, b.uri); !strings.Contains(r.out, "Images are identical.") {
		t.Fatalf("want identical:\n%s", r)
	}
	r := mustRun(t, "", "nbdinfo", "--map", b.uri)
	exts := parseMap(t, r, 1<<30)
	want := []mapExtent{
		{0, mib, 0, "data"},
		{mib, 699 * mib, 3, "hole,zero"},
		{700 * mib, 3 * mib, 0, "data"},
		{703 * mib, 321 * mib, 3, "hole,zero"},
	}
	if fmt.Sprint(exts) != fmt.Sprint(want) {
		t.Errorf("destination map = %v, want %v", exts, want)
	}
}
