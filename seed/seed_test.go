package seed

import (
	"math"
	"testing"
)

// The figures the README and the docs quote are the table's own: 12.6x
// on macOS and 2.28x on Linux for qemu-img reading at 2 MiB.
func TestQuotedSpeedups(t *testing.T) {
	for _, c := range []struct {
		os    OS
		cs    string
		want  float64
		at    int
		ratio float64
	}{
		{MacOS, QemuImgRead, 12.6, 2 << 20, 13.361 / 1.060},
		{Linux, QemuImgRead, 2.28, 2 << 20, 4.292 / 1.884},
		{Linux, NbdcopyHash, 1.19, 524288, 2.140 / 1.794},
		{MacOS, QemuImgWrite, 9.2, 2 << 20, 8.063 / 0.877},
		{Linux, Blksum, 2.65, 4 << 20, 3.582 / 1.352},
	} {
		tb, ok := Lookup(c.os, c.cs)
		if !ok {
			t.Fatalf("no %s table for %s", c.os, c.cs)
		}
		if tb.Speedup != c.want {
			t.Errorf("%s %s: speed-up %v, want %v", c.os, c.cs, tb.Speedup, c.want)
		}
		r, ok := tb.At(c.at)
		if !ok {
			t.Fatalf("%s %s: no row at %d", c.os, c.cs, c.at)
		}
		if got, _ := tb.VsDefault(r); math.Abs(got-c.ratio) > 1e-9 {
			t.Errorf("%s %s at %d: %v times the default, want %v", c.os, c.cs, c.at, got, c.ratio)
		}
		if tb.Source == "" || tb.Rows[0].Buffer != Default {
			t.Errorf("%s %s: source %q, first row %q: every table names its patch and starts at the default", c.os, c.cs, tb.Source, tb.Rows[0].Buffer)
		}
	}
}

// Every case of the series has a table on both platforms, 8 rows on macOS
// and 5 on Linux, as published.
func TestEveryCase(t *testing.T) {
	for _, cs := range []string{QemuImgRead, QemuImgWrite, NbdcopyHash, Blksum} {
		for os, n := range map[OS]int{MacOS: 8, Linux: 5} {
			tb, ok := Lookup(os, cs)
			if !ok || len(tb.Rows) != n {
				t.Errorf("%s %s: %d rows, want %d", os, cs, len(tb.Rows), n)
			}
		}
	}
	if _, ok := Lookup(Linux, "fio"); ok {
		t.Error("a case the series did not measure has no table")
	}
}

func TestParseRefusesABadRow(t *testing.T) {
	for _, bad := range []string{
		"h\nLinux\tqemu-img read\t4k\t1\t1\t1\t1\tsrc",
		"h\nLinux\tqemu-img read\tdefault\tslow\t1\t1\t1\tsrc",
		"h\nLinux\tqemu-img read\tdefault\t1\t1\t1",
	} {
		if _, err := parse(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
