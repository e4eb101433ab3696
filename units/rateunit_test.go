package units

import "testing"

func TestRateScales(t *testing.T) {
	const r = 3.42 * (1 << 30) // 3.42 GiB/s
	for _, c := range []struct{ flag, format, number string }{
		{"gib", "3.42 GiB/s", "3.42"},
		{"gbit", "29.4 Gbit/s", "29.38"}, // 3.42 × 2³⁰ × 8 / 10⁹
		{"mib", "3502 MiB/s", "3502.1"},
		{"mbit", "29378 Mbit/s", "29378"},
	} {
		u, err := ParseRateScale(c.flag)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.Format(r); got != c.format {
			t.Errorf("%s: Format = %q, want %q", c.flag, got, c.format)
		}
		if got := u.Number(r); got != c.number {
			t.Errorf("%s: Number = %q, want %q", c.flag, got, c.number)
		}
	}
	if _, err := ParseRateScale("gb"); err == nil {
		t.Error("gb accepted")
	}
}

// TestRateScaleIperf3Letters: iperf3's -f letters name the same units,
// upper case for bytes (iperf3 counts those in 1024s), lower case for
// bits (in 1000s); its k, K, t and T are refused, with the list.
func TestRateScaleIperf3Letters(t *testing.T) {
	for letter, flag := range map[string]string{"G": "gib", "g": "gbit", "M": "mib", "m": "mbit"} {
		if u, err := ParseRateScale(letter); err != nil || u.Flag != flag {
			t.Errorf("-f %s: %+v, %v; want %s", letter, u, err, flag)
		}
	}
	for _, bad := range []string{"k", "K", "t", "T", "GIB"} {
		if _, err := ParseRateScale(bad); err == nil {
			t.Errorf("-f %s accepted", bad)
		}
	}
}
