package units

import (
	"math"
	"strings"
	"testing"
)

// formats are a formatter's cases: an input and the text it must give.
type formats[T any] []struct {
	in   T
	want string
}

// check runs fn over the cases, naming it in each failure.
func (cases formats[T]) check(t *testing.T, name string, fn func(T) string) {
	t.Helper()
	for _, c := range cases {
		if got := fn(c.in); got != c.want {
			t.Errorf("%s(%v) = %q, want %q", name, c.in, got, c.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"1", 1},
		{"512", 512},
		{"65536", 65536},
		{"512B", 512},
		{"512b", 512},
		{"64k", 64 << 10},
		{"64K", 64 << 10},
		{"64KiB", 64 << 10},
		{"64kib", 64 << 10},
		{"64Ki", 64 << 10},
		{"64KB", 64 << 10},
		{"64kb", 64 << 10},
		{"64 KiB", 64 << 10},
		{" 64k ", 64 << 10},
		{"2m", 2 << 20},
		{"2M", 2 << 20},
		{"2MiB", 2 << 20},
		{"2MB", 2 << 20},
		{"10g", 10 << 30},
		{"10G", 10 << 30},
		{"10GiB", 10 << 30},
		{"1t", 1 << 40},
		{"1TiB", 1 << 40},
		{"1p", 1 << 50},
		{"7E", 7 << 60},
		{"208k", 212992},
		{"1.5m", 1572864},
		{"1.5k", 1536},
		{"0.5k", 512},
		{"1.0", 1},
		{"2.000", 2},
		{"1.25k", 1280},
		{"0.001953125k", 2},
		{"007k", 7 << 10},
		{"9223372036854775807", math.MaxInt64},
		{"7.5e", 15 << 59},
		{"8191.9990234375p", 8191*(1<<50) + 1023*(1<<40)}, // 0.9990234375 = 1023/1024
	}
	for _, tt := range tests {
		if got, err := ParseSize(tt.in); err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseSizeErrors(t *testing.T) {
	tests := []struct {
		in      string
		errPart string
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"-1", "negative"},
		{"-64k", "negative"},
		{"+5", "does not start with a number"},
		{"k", "does not start with a number"},
		{"abc", "does not start with a number"},
		{".5k", "malformed number"},
		{"1.", "malformed number"},
		{"1.k", "malformed number"},
		{"1..5k", "malformed number"},
		{"1.2.3", "malformed number"},
		{"1.3k", "not a whole number"},
		{"1.5", "not a whole number"},
		{"0.1", "not a whole number"},
		{"64x", "unknown unit"},
		{"64kk", "unknown unit"},
		{"64kiBB", "unknown unit"},
		{"64 k i", "unknown unit"},
		{"64KiB/s", "unknown unit"},
		{"1e3", "unknown unit"},
		{"0x10", "unknown unit"},
		{"10 20", "unknown unit"},
		{"9223372036854775808", "too large"},
		{"8e", "too large"},
		{"8192p", "too large"},
		{"99999999999999999999999t", "too large"},
		{strings.Repeat("9", 100), "too long"},
	}
	for _, tt := range tests {
		if got, err := ParseSize(tt.in); err == nil || !strings.Contains(err.Error(), tt.errPart) {
			t.Errorf("ParseSize(%q) = %d, %v; want an error containing %q", tt.in, got, err, tt.errPart)
		}
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0"},
		{1, "1"},
		{512, "512"},
		{1000, "1000"},
		{1023, "1023"},
		{1024, "1k"},
		{1536, "1536"},
		{8192, "8k"},
		{65536, "64k"},
		{212992, "208k"},
		{1 << 20, "1m"},
		{2097152, "2m"},
		{3 << 19, "1536k"},
		{32 << 20, "32m"},
		{1 << 30, "1g"},
		{10 << 30, "10g"},
		{1 << 40, "1t"},
		{1 << 50, "1p"},
		{1 << 60, "1e"},
		{7 << 60, "7e"},
		{math.MaxInt64, "9223372036854775807"},
		{-2048, "-2k"},
	}
	for _, tt := range tests {
		if got := FormatSize(tt.in); got != tt.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tt.in, got, tt.want)
		}
		if tt.in < 0 {
			continue
		}
		back, err := ParseSize(FormatSize(tt.in))
		if err != nil || back != tt.in {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", tt.in, back, err)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	formats[float64]{
		{0, "0 B"},
		{1, "1 B"},
		{512, "512 B"},
		{512.4, "512 B"},
		{1023, "1023 B"},
		{1023.7, "1.00 KiB"},
		{1024, "1 KiB"},
		{1536, "1.50 KiB"},
		{212992, "208 KiB"},
		{213504, "208.5 KiB"},
		{2 << 20, "2 MiB"},
		{1.5 * (1 << 30), "1.50 GiB"},
		{12.345 * (1 << 30), "12.35 GiB"},
		{1 << 40, "1 TiB"},
		{(1 << 30) - 1, "1.00 GiB"},
		{1 << 62, "4 EiB"},
		{1e30, "867361737988.4 EiB"},
		{-1536, "-1.50 KiB"},
		{-0.2, "0 B"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
	}.check(t, "FormatBytes", FormatBytes)
}

func TestFormatRate(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	formats[float64]{
		{0, "0 B/s"},
		{512, "512 B/s"},
		{1024, "1.00 KiB/s"},
		{1536, "1.50 KiB/s"},
		{2048, "2.00 KiB/s"},
		{512 << 20, "512 MiB/s"},
		{51.25 * mib, "51.2 MiB/s"},
		{18.5 * mib, "18.5 MiB/s"},
		{935.2 * mib, "935 MiB/s"},
		{1012.4 * mib, "0.99 GiB/s"},
		{2.31 * gib, "2.31 GiB/s"},
		{1.45 * gib, "1.45 GiB/s"},
		{12.3 * gib, "12.3 GiB/s"},
		{9.999 * gib, "10.0 GiB/s"},
		{9.996 * gib, "10.0 GiB/s"},
		{99.97 * mib, "100 MiB/s"},
		{999.7 * mib, "0.98 GiB/s"},
		{1023.99 * mib, "1.00 GiB/s"},
		{1023.94 * mib, "1.00 GiB/s"},
		{-2 << 20, "-2.00 MiB/s"},
		{math.NaN(), "NaN"}, // as the doc says: not "NaN B/s"
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
	}.check(t, "FormatRate", FormatRate)
}

func TestSigRatioClock(t *testing.T) {
	formats[float64]{{0, "0.00"}, {9.8, "9.80"}, {9.996, "10.0"}, {16.44, "16.4"}, {99.97, "100"}, {935.2, "935"},
		{-3.1, "-3.10"}}.check(t, "Sig", Sig)
	formats[float64]{{2.4, "2.40x"}, {0, "0.00x"}, {0.14, "0.14x"}, {0.0453, "0.0453x"}, {0.000453, "0.000453x"},
		{0.09996, "0.10x"}, {118.4, "118x"}, {2208.2, "2208x"}}.check(t, "FormatRatio", FormatRatio)
	formats[float64]{{-1, "0:00"}, {0, "0:00"}, {61.9, "1:01"}, {3725, "1:02:05"}}.check(t, "FormatClock", FormatClock)
	formats[float64]{{0.000453, "0.000453"}, {0.0122, "0.0122"}, {0.5, "0.500"}, {0.09996, "0.100"}, {0.0049, "0.00490"},
		{3.14159, "3.14"}}.check(t, "ThreeSig", ThreeSig)
	if d, u := RateUnit(3 << 30); d != 1<<30 || u != "GiB/s" {
		t.Errorf("RateUnit(3 GiB/s) = %v %s", d, u)
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{
		"0", "1", "512", "65536", "64k", "64K", "64KiB", "64KB", "2m", "2MiB",
		"10g", "1t", "7e", "1.5m", "1.3k", "-1", "", " ", "k", "1.", ".5",
		"9223372036854775807", "9223372036854775808", "8e", "1e3", "64 KiB",
		"0.001953125k", "1..2", "\x00", "64kiBB", "١٢", "∞",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseSize(%q): empty error message", s)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d, negative", s, n)
		}
		out := FormatSize(n)
		back, err := ParseSize(out)
		if err != nil || back != n {
			t.Fatalf("ParseSize(FormatSize(%d) = %q) = %d, %v", n, out, back, err)
		}
		_ = FormatBytes(float64(n))
		_ = FormatRate(float64(n))
	})
}

// A CSV cell drops float arithmetic's last bits and never turns to an
// exponent: 0.0405 as a user computed it, a byte rate as its digits.
func TestCSVNumber(t *testing.T) {
	for in, want := range map[float64]string{
		0.081 / 2:        "0.0405",
		0.1 + 0.2:        "0.3",
		8589934592:       "8589934592",
		1.0 / 3:          "0.333333333333",
		0.000000123456:   "0.000000123456",
		12.25:            "12.25",
		0:                "0",
		123456.789012345: "123456.789012",
	} {
		if got := CSVNumber(in); got != want {
			t.Errorf("CSVNumber(%v) = %q, want %q", in, got, want)
		}
	}
}
