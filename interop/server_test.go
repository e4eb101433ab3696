package interop

// Real clients against `nbdscope serve` (nbd-notes §5, items 1-14).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"nbdscope/nbd"
)

// TestServeNbdinfoSize: `nbdinfo --size` prints the export size.
func TestServeNbdinfoSize(t *testing.T) {
	need(t, "nbdinfo")
	s := startServe(t)
	r := mustRun(t, "", "nbdinfo", "--size", s.uri)
	if got := strings.TrimSpace(r.out); got != strconv.Itoa(exportSize) {
		t.Fatalf("nbdinfo --size printed %q, want %d:\n%s", got, exportSize, r)
	}
}

// nbdinfoJSON is the output of `nbdinfo --json` (libnbd 1.14).
type nbdinfoJSON struct {
	Protocol   *string          `json:"protocol"`
	TLS        *bool            `json:"TLS"`
	Structured *bool            `json:"structured"`
	Exports    []map[string]any `json:"exports"`
}

// TestServeNbdinfoJSON: `nbdinfo --json` parses, reports fixed newstyle with
// structured replies, the size, base:allocation and flags matching a
// writable, multi-conn memory export.
func TestServeNbdinfoJSON(t *testing.T) {
	need(t, "nbdinfo")
	for _, ro := range []bool{false, true} {
		t.Run(map[bool]string{false: "writable", true: "read-only"}[ro], func(t *testing.T) {
			var extra []string
			if ro {
				extra = append(extra, "--read-only")
			}
			s := startServe(t, extra...)
			r := mustRun(t, "", "nbdinfo", "--json", s.uri)
			var j nbdinfoJSON
			if err := json.Unmarshal([]byte(r.out), &j); err != nil {
				t.Fatalf("nbdinfo --json output does not parse: %v\n%s", err, r)
			}
			if j.Protocol == nil || *j.Protocol != "newstyle-fixed" {
				t.Errorf("protocol = %v, want newstyle-fixed", deref(j.Protocol))
			}
			if j.Structured == nil || !*j.Structured {
				t.Errorf("structured = %v, want true", deref(j.Structured))
			}
			if j.TLS == nil || *j.TLS {
				t.Errorf("TLS = %v, want false", deref(j.TLS))
			}
			if len(j.Exports) != 1 {
				t.Fatalf("%d exports, want 1:\n%s", len(j.Exports), r)
			}
			e := j.Exports[0]
			want := map[string]any{
				"export-name":    "",
				"export-size":    float64(exportSize),
				"is_read_only":   ro,
				"is_rotational":  false,
				"can_flush":      true,
				"can_fua":        true,
				"can_multi_conn": true,
				"can_df":         true,
				"can_cache":      true,
			}
			if !ro {
				// A read-only export may advertise trim and zero too
				// (nbdinfo shows the flags; the server answers EPERM).
				want["can_trim"] = true
				want["can_zero"] = true
				want["can_fast_zero"] = true // memory backend implements Zeroer
			}
			for k, v := range want {
				got, ok := e[k]
				if !ok {
					t.Errorf("key %q missing from the export object", k)
					continue
				}
				if got != v {
					t.Errorf("%s = %v, want %v", k, got, v)
				}
			}
			ctxs, _ := e["contexts"].([]any)
			if len(ctxs) != 1 || ctxs[0] != "base:allocation" {
				t.Errorf("contexts = %v, want [base:allocation]", e["contexts"])
			}
			if t.Failed() {
				t.Logf("%s", r)
			}
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return "<missing>"
	}
	return *p
}

// mapExtent is one line of `nbdinfo --map`.
type mapExtent struct {
	off, length int64
	typ         int
	desc        string
}

func (e mapExtent) String() string {
	return fmt.Sprintf("[%d,+%d) %d %s", e.off, e.length, e.typ, e.desc)
}

// parseMap parses `nbdinfo --map` output, checks that the extents are
// contiguous from 0 to size, and merges neighbours of the same type.
func parseMap(t *testing.T, r result, size int64) []mapExtent {
	t.Helper()
	var exts []mapExtent
	next := int64(0)
	for _, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Fatalf("map line %q: want OFFSET LENGTH TYPE [DESCRIPTION]:\n%s", line, r)
		}
		off, err1 := strconv.ParseInt(f[0], 10, 64)
		length, err2 := strconv.ParseInt(f[1], 10, 64)
		typ, err3 := strconv.Atoi(f[2])
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatalf("map line %q: %v\n%s", line, err, r)
		}
		if off != next || length <= 0 {
			t.Fatalf("map line %q: want an extent starting at %d:\n%s", line, next, r)
		}
		next = off + length
		e := mapExtent{off, length, typ, strings.Join(f[3:], " ")}
		if n := len(exts); n > 0 && exts[n-1].typ == typ {
			exts[n-1].length += length
			continue
		}
		exts = append(exts, e)
	}
	if next != size {
		t.Fatalf("map covers [0,%d), want [0,%d):\n%s", next, size, r)
	}
	return exts
}

// TestServeNbdinfoMap: `nbdinfo --map` on a fresh memory export is one
// hole; after qemu-io writes two 1 MiB runs, exactly those are data.
func TestServeNbdinfoMap(t *testing.T) {
	need(t, "nbdinfo", "qemu-io")
	s := startServe(t)
	exts := parseMap(t, mustRun(t, "", "nbdinfo", "--map", s.uri), exportSize)
	if want := (mapExtent{0, exportSize, 3, "hole,zero"}); len(exts) != 1 || exts[0] != want {
		t.Fatalf("fresh export map = %v, want [%v]", exts, want)
	}

	mustRun(t, "", "qemu-io", "-f", "raw", "-c", "write -P 0x55 0 1M", "-c", "write -P 0x66 32M 1M", s.uri)
	r := mustRun(t, "", "nbdinfo", "--map", s.uri)
	exts = parseMap(t, r, exportSize)
	want := []mapExtent{
		{0, mib, 0, "data"},
		{mib, 31 * mib, 3, "hole,zero"},
		{32 * mib, mib, 0, "data"},
		{33 * mib, 31 * mib, 3, "hole,zero"},
	}
	if fmt.Sprint(exts) != fmt.Sprint(want) {
		t.Fatalf("map after writes = %v, want %v\n%s", exts, want, r)
	}
}

// TestServeNbdinfoList: `nbdinfo --list` shows the export with its name and
// description.
func TestServeNbdinfoList(t *testing.T) {
	need(t, "nbdinfo")
	s := startServe(t, "--export", "disk1", "--description", "Test disk one")
	r := mustRun(t, "", "nbdinfo", "--list", unixURI(s.sock, ""))
	for _, want := range []string{
		`export="disk1":`,
		"description: Test disk one",
		"export-size: 67108864",
		"base:allocation",
		"can_multi_conn: true",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("nbdinfo --list output lacks %q", want)
		}
	}
	if n := strings.Count(r.out, "export="); n != 1 {
		t.Errorf("%d export= lines, want 1", n)
	}
	if t.Failed() {
		t.Logf("%s", r)
	}
}

// TestServeNbdinfoCanIs: `nbdinfo --can multi-conn` exits 0; `--is
// read-only` exits 2 on a writable export and 0 with --read-only.
func TestServeNbdinfoCanIs(t *testing.T) {
	need(t, "nbdinfo")
	s := startServe(t)
	if r := run(t, "", "nbdinfo", "--can", "multi-conn", s.uri); r.code != 0 {
		t.Errorf("want exit 0 (multi-conn):\n%s", r)
	}
	if r := run(t, "", "nbdinfo", "--is", "read-only", s.uri); r.code != 2 {
		t.Errorf("want exit 2 (writable):\n%s", r)
	}
	for _, c := range []string{"flush", "fua", "trim", "zero", "df", "cache"} {
		if r := run(t, "", "nbdinfo", "--can", c, s.uri); r.code != 0 {
			t.Errorf("want exit 0 (can %s):\n%s", c, r)
		}
	}
	ro := startServe(t, "--read-only")
	if r := run(t, "", "nbdinfo", "--is", "read-only", ro.uri); r.code != 0 {
		t.Errorf("want exit 0 (--read-only):\n%s", r)
	}
	pat := startServe(t, "--backend", "pattern")
	if r := run(t, "", "nbdinfo", "--is", "read-only", pat.uri); r.code != 0 {
		t.Errorf("want exit 0 (pattern backend is read-only):\n%s", r)
	}
}

// TestServeNbdinfoMissingExport: an export that does not exist makes
// nbdinfo exit 1 with the server's GO error.
func TestServeNbdinfoMissingExport(t *testing.T) {
	need(t, "nbdinfo")
	s := startServe(t, "--export", "disk1")
	for _, args := range [][]string{
		{unixURI(s.sock, "nosuch")},
		{"--size", unixURI(s.sock, "nosuch")},
	} {
		r := run(t, "", "nbdinfo", args...)
		if r.code != 1 {
			t.Errorf("want exit 1:\n%s", r)
		}
		// nbdinfo (option mode) reports the GO error; --size connects
		// directly and words it differently.
		if !strings.Contains(r.out, "server replied with error to opt_go request") &&
			!strings.Contains(r.out, "server has no export named 'nosuch'") {
			t.Errorf("want the GO error in the output:\n%s", r)
		}
	}
	// The right name and the empty name both work.
	for _, name := range []string{"disk1", ""} {
		if r := mustRun(t, "", "nbdinfo", "--size", unixURI(s.sock, name)); strings.TrimSpace(r.out) != "67108864" {
			t.Errorf("export %q: %s", name, r)
		}
	}
}

// TestServeQemuImgInfo: `qemu-img info` reports a 64 MiB raw image.
func TestServeQemuImgInfo(t *testing.T) {
	need(t, "qemu-img")
	s := startServe(t)
	r := mustRun(t, "", "qemu-img", "info", s.uri)
	if !strings.Contains(r.out, "virtual size: 64 MiB (67108864 bytes)") {
		t.Fatalf("want virtual size 64 MiB:\n%s", r)
	}
	r = mustRun(t, "", "qemu-img", "info", "--output=json", s.uri)
	var info struct {
		VirtualSize int64  `json:"virtual-size"`
		Format      string `json:"format"`
	}
	if err := json.Unmarshal([]byte(r.out), &info); err != nil || info.VirtualSize != exportSize || info.Format != "raw" {
		t.Fatalf("qemu-img info --output=json: %+v, %v\n%s", info, err, r)
	}
}

// TestServeQemuImgConvert: qemu-img convert a random image into the export
// (with -n, and without -n on a second server), qemu-img compare says
// identical, and converting back out yields the same bytes.
func TestServeQemuImgConvert(t *testing.T) {
	need(t, "qemu-img")
	dir := t.TempDir()
	src := filepath.Join(dir, "src.img")
	want := writeRandomImage(t, src, exportSize, 1)

	for _, noCreate := range []bool{true, false} {
		t.Run(map[bool]string{true: "with-n", false: "without-n"}[noCreate], func(t *testing.T) {
			s := startServe(t)
			args := []string{"convert"}
			if noCreate {
				args = append(args, "-n")
			}
			args = append(args, "-f", "raw", "-O", "raw", src, s.uri)
			mustRun(t, "", "qemu-img", args...)
			r := mustRun(t, "", "qemu-img", "compare", "-f", "raw", "-F", "raw", src, s.uri)
			if !strings.Contains(r.out, "Images are identical.") {
				t.Fatalf("want identical images:\n%s", r)
			}
			out := filepath.Join(dir, "out.img")
			mustRun(t, "", "qemu-img", "convert", "-f", "raw", "-O", "raw", s.uri, out)
			sameBytes(t, "out.img vs src.img", want, readFile(t, out))
		})
	}

	// A differing byte must be noticed (the compare above is meaningful).
	s := startServe(t)
	mustRun(t, "", "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", src, s.uri)
	mustRun(t, "", "qemu-io", "-f", "raw", "-c", "write -P 0x5a 40M 512", s.uri)
	if r := run(t, "", "qemu-img", "compare", "-f", "raw", "-F", "raw", src, s.uri); r.code != 1 || !strings.Contains(r.out, "Content mismatch at offset 41943040") {
		t.Fatalf("want exit 1 and a mismatch at 40M:\n%s", r)
	}
}

// qemuIOScript is nbd-notes §5 item 9: WRITE+FUA, READ, WRITE_ZEROES,
// TRIM and FLUSH.
var qemuIOScript = []string{
	"-f", "raw",
	"-c", "write -P 0xab 0 1M",
	"-c", "read -P 0xab 0 1M",
	"-c", "write -z 1M 1M",
	"-c", "read -P 0 1M 1M",
	"-c", "discard 2M 1M",
	"-c", "flush",
}

// TestServeQemuIO: the qemu-io script passes its pattern checks; a wrong
// pattern is detected (so the checks are real); a trimmed range reads zero.
func TestServeQemuIO(t *testing.T) {
	need(t, "qemu-io")
	s := startServe(t)
	// Put data under the range the script discards.
	mustRun(t, "", "qemu-io", "-f", "raw", "-c", "write -P 0x77 2M 1M", "-c", "read -P 0x77 2M 1M", s.uri)
	r := mustRun(t, "", "qemu-io", append(qemuIOScript, s.uri)...)
	if strings.Contains(r.out, "Pattern verification failed") {
		t.Fatalf("pattern verification failed:\n%s", r)
	}
	for _, want := range []string{"wrote 1048576/1048576 bytes at offset 0", "read 1048576/1048576 bytes at offset 1048576", "discard 1048576/1048576 bytes at offset 2097152"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r)
		}
	}
	// The memory backend drops trimmed whole chunks: they read as zero.
	mustRun(t, "", "qemu-io", "-f", "raw", "-c", "read -P 0 2M 1M", "-c", "read -P 0xab 0 1M", s.uri)

	r = run(t, "", "qemu-io", "-f", "raw", "-c", "read -P 0xcd 0 1M", s.uri)
	if r.code == 0 || !strings.Contains(r.out, "Pattern verification failed") {
		t.Fatalf("a wrong pattern went unnoticed (want nonzero exit and \"Pattern verification failed\"):\n%s", r)
	}
}

// TestServeQemuImgMap: `qemu-img map --output=json` is a JSON list of
// extents covering the export, with data where qemu-io wrote.
func TestServeQemuImgMap(t *testing.T) {
	need(t, "qemu-img", "qemu-io")
	s := startServe(t)
	mustRun(t, "", "qemu-io", "-f", "raw", "-c", "write -P 0x11 4M 2M", s.uri)
	r := mustRun(t, "", "qemu-img", "map", "-f", "raw", "--output=json", s.uri)
	var exts []struct {
		Start  int64 `json:"start"`
		Length int64 `json:"length"`
		Zero   bool  `json:"zero"`
		Data   bool  `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.out), &exts); err != nil {
		t.Fatalf("qemu-img map output is not a JSON list: %v\n%s", err, r)
	}
	next := int64(0)
	var data []string
	for _, e := range exts {
		if e.Start != next || e.Length <= 0 {
			t.Fatalf("extent %+v does not continue at %d:\n%s", e, next, r)
		}
		next += e.Length
		if e.Data {
			data = append(data, fmt.Sprintf("%d+%d", e.Start, e.Length))
		}
	}
	if next != exportSize {
		t.Fatalf("extents cover %d bytes, want %d:\n%s", next, exportSize, r)
	}
	if got := strings.Join(data, ","); got != fmt.Sprintf("%d+%d", 4*mib, 2*mib) {
		t.Fatalf("data extents %s, want 4M+2M only:\n%s", got, r)
	}
}

// TestServeNbdcopy: nbdcopy a random image into the export and back out,
// with 4 connections (needs multi-conn), with --flush, and with the
// server's SO_SNDBUF set to 64 KiB.
func TestServeNbdcopy(t *testing.T) {
	need(t, "nbdcopy")
	dir := t.TempDir()
	src := filepath.Join(dir, "src.img")
	want := writeRandomImage(t, src, exportSize, 2)
	for _, tc := range []struct {
		name  string
		args  []string // nbdcopy flags
		serve []string // nbdscope serve flags
	}{
		{"connections=4", []string{"--threads=4", "--connections=4"}, nil},
		{"flush", []string{"--flush"}, nil},
		{"sndbuf=64k", []string{"--threads=4", "--connections=4"}, []string{"--sndbuf", "64k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServe(t, tc.serve...)
			mustRun(t, "", "nbdcopy", append(tc.args, src, s.uri)...)
			out := filepath.Join(dir, "out-"+tc.name+".img")
			mustRun(t, "", "nbdcopy", append(tc.args, s.uri, out)...)
			sameBytes(t, "nbdcopy round trip", want, readFile(t, out))
		})
	}
}

// TestServeNbdcopyNull: `nbdcopy --threads=4 --connections=4 URI null:`
// reads a 1 GiB null export over 4 connections.
func TestServeNbdcopyNull(t *testing.T) {
	need(t, "nbdcopy", "qemu-io")
	s := startServe(t, "--backend", "null", "--size", "1g")
	mustRun(t, "", "nbdcopy", "--threads=4", "--connections=4", s.uri, "null:")
	// The null backend reads as its fill byte (0xff by default).
	mustRun(t, "", "qemu-io", "-r", "-f", "raw", "-c", "read -P 0xff 0 1M", "-c", "read -P 0xff 1023M 1M", s.uri)
}

// TestServeFio: fio's nbd engine writes 64 MiB at random with 16 in flight,
// then verifies every block (crc32c); and two jobs (two connections each:
// a size probe and the I/O one) doing mixed I/O with a FLUSH every 32
// writes for 2 s.
func TestServeFio(t *testing.T) {
	need(t, "fio")
	t.Run("randwrite-verify", func(t *testing.T) {
		s := startServe(t)
		r := run(t, s.dir, "fio", "--name=v", "--ioengine=nbd", "--uri="+s.uri,
			"--rw=randwrite", "--bs=4k", "--size=64M", "--iodepth=16",
			"--verify=crc32c", "--do_verify=1")
		if r.code != 0 || !strings.Contains(r.out, "err= 0") || strings.Contains(r.out, "verify:") {
			t.Fatalf("want exit 0 and err= 0:\n%s", r)
		}
		// Each 4 KiB block was written once and read back once.
		if !strings.Contains(r.out, "issued rwts: total=16384,16384,0,0") {
			t.Errorf("want 16384 writes and 16384 verify reads:\n%s", r)
		}
	})
	t.Run("randrw-2jobs-fsync", func(t *testing.T) {
		s := startServe(t)
		// No --verify here: the two jobs share one export, so each would
		// see the other's blocks.
		r := run(t, s.dir, "fio", "--name=rw", "--ioengine=nbd", "--uri="+s.uri,
			"--rw=randrw", "--bs=4k", "--size=64M", "--iodepth=16", "--numjobs=2",
			"--fsync=32", "--time_based", "--runtime=2")
		if r.code != 0 || strings.Count(r.out, "err= 0") != 2 {
			t.Fatalf("want exit 0 and err= 0 for both jobs:\n%s", r)
		}
		if strings.Count(r.out, "fsync/fdatasync/sync_file_range:") != 2 {
			t.Errorf("no fsync latencies reported (FLUSH not exercised?):\n%s", r)
		}
	})
}

// TestServeQemuNbdList: `qemu-nbd -L` lists one export with name,
// description and size.
func TestServeQemuNbdList(t *testing.T) {
	need(t, "qemu-nbd")
	s := startServe(t, "--export", "disk1", "--description", "Test disk one")
	r := mustRun(t, "", "qemu-nbd", "-L", "-k", s.sock)
	for _, want := range []string{"exports available: 1", "export: 'disk1'", "description: Test disk one", "size:  67108864", "base:allocation"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("qemu-nbd -L output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("%s", r)
	}
}

// TestServeReadOnly: with --read-only, qemu-io cannot write, and the Go
// client's WRITE, TRIM and WRITE_ZEROES get EPERM from the server (qemu-io
// refuses client-side, so the raw requests are the real check).
func TestServeReadOnly(t *testing.T) {
	need(t, "qemu-io")
	s := startServe(t, "--read-only")
	r := run(t, "", "qemu-io", "-f", "raw", "-c", "write -P 0x11 0 4k", s.uri)
	if r.code == 0 || strings.Contains(r.out, "wrote 4096/4096") {
		t.Fatalf("write to a read-only export succeeded:\n%s", r)
	}
	mustRun(t, "", "qemu-io", "-f", "raw", "-r", "-c", "read -P 0 0 1M", s.uri)

	c := dialT(t, s.uri, nbd.ClientOptions{})
	if !c.Info().ReadOnly() {
		t.Errorf("flags 0x%x lack READ_ONLY", c.Info().Flags)
	}
	buf := make([]byte, 4096)
	if _, err := c.WriteAt(buf, 0); !errors.Is(err, nbd.EPERM) {
		t.Errorf("WRITE: err = %v, want EPERM", err)
	}
	if err := c.Trim(0, 4096); !errors.Is(err, nbd.EPERM) {
		t.Errorf("TRIM: err = %v, want EPERM", err)
	}
	if err := c.WriteZeroes(0, 4096, 0); !errors.Is(err, nbd.EPERM) {
		t.Errorf("WRITE_ZEROES: err = %v, want EPERM", err)
	}
	// The connection survives the refusals.
	if _, err := c.ReadAt(buf, 0); err != nil {
		t.Errorf("READ after the refusals: %v", err)
	}
	if err := c.Flush(); err != nil {
		t.Errorf("FLUSH on a read-only export: %v", err)
	}
}

// TestServePattern: the pattern backend, copied out by qemu-img convert,
// is nbdkit's pattern (each aligned 8 bytes = their big-endian offset).
func TestServePattern(t *testing.T) {
	need(t, "qemu-img")
	s := startServe(t, "--backend", "pattern")
	out := filepath.Join(s.dir, "pattern.img")
	mustRun(t, "", "qemu-img", "convert", "-f", "raw", "-O", "raw", s.uri, out)
	b := readFile(t, out)
	if len(b) != exportSize {
		t.Fatalf("pattern.img has %d bytes, want %d", len(b), exportSize)
	}
	checkPattern(t, "pattern.img", b, 0)
}

// TestServeTCP: `--listen 127.0.0.1:PORT` serves nbd://127.0.0.1:PORT to
// nbdinfo, qemu-img and the Go client. The server binds port 0 and says
// which port it got, so no other process can take the port in between.
func TestServeTCP(t *testing.T) {
	need(t, "nbdinfo", "qemu-img")
	const listen = "127.0.0.1:0"
	p := startProc(t, procSpec{
		name:    nbdscopeBin,
		args:    []string{"serve", "--listen", listen, "--backend", "memory", "--size", "64m"},
		network: "tcp", address: listen, ours: true,
	})
	addr := p.spec.address
	r := mustRun(t, "", "nbdinfo", "--size", "nbd://"+addr)
	if strings.TrimSpace(r.out) != "67108864" {
		t.Fatalf("want 67108864:\n%s", r)
	}
	r = mustRun(t, "", "qemu-img", "info", "nbd://"+addr)
	if !strings.Contains(r.out, "virtual size: 64 MiB (67108864 bytes)") {
		t.Fatalf("want virtual size 64 MiB:\n%s", r)
	}
	c := dialT(t, "nbd://"+addr, nbd.ClientOptions{})
	if c.Size() != exportSize {
		t.Fatalf("Go client over TCP: size %d", c.Size())
	}
}

// dialT connects the Go client and closes it at the end of the test.
func dialT(t testing.TB, uri string, opts nbd.ClientOptions) *nbd.Client {
	t.Helper()
	c := dial(t, uri, opts)
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// dial connects the Go client; the caller closes it.
func dial(t testing.TB, uri string, opts nbd.ClientOptions) *nbd.Client {
	t.Helper()
	u, err := nbd.ParseURI(uri)
	if err != nil {
		t.Fatalf("ParseURI(%q): %v", uri, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := nbd.Dial(ctx, u, opts)
	if err != nil {
		t.Fatalf("Dial(%s): %v", uri, err)
	}
	return c
}
