// Package units parses and formats human-readable byte sizes and rates.
//
// All units are binary: 1k = 1 KiB = 1024 bytes, 1m = 1 MiB, and so on.
// ParseSize accepts what a user types on a command line ("65536", "64k",
// "64KiB", "2m", "1.5m"); FormatSize prints the short form that ParseSize
// reads back exactly ("208k", "2m", "1000"); FormatBytes and FormatRate print
// values for display ("1.50 GiB", "2.31 GiB/s").
package units

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Binary multipliers.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
	PiB int64 = 1 << 50
	EiB int64 = 1 << 60
)

// maxSizeInput bounds the text ParseSize looks at, so that a hostile input
// cannot make it build huge big.Ints.
const maxSizeInput = 64

// unit letters in increasing order; index+1 is the power of 1024.
const unitLetters = "kmgtpe"

// ParseSize parses a human size: plain bytes ("65536"), or a number with a
// binary unit suffix k, m, g, t, p, e (either case), optionally followed by
// "i", "iB" or "B" ("64k", "64K", "64KiB", "64KB", "2MiB", "10g"). A bare
// "B" suffix means bytes ("512B"). A fractional part is allowed only when
// the result is a whole number of bytes ("1.5m" = 1572864, "1.3k" is
// rejected). Negative sizes, empty strings, overflow and garbage are errors.
// Surrounding white space and blanks between number and unit are ignored.
func ParseSize(s string) (int64, error) {
	orig := s
	bad := func(format string, args ...any) (int64, error) {
		return 0, &SizeError{Input: orig, Problem: fmt.Sprintf(format, args...)}
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return bad("is empty")
	}
	if len(s) > maxSizeInput {
		return 0, &SizeError{Input: s[:20] + "…", Problem: "is too long"}
	}
	if s[0] == '-' {
		return bad("is negative")
	}
	// Split the number from the suffix.
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, suffix := s[:i], strings.TrimLeft(s[i:], " \t")
	if num == "" {
		return bad("does not start with a number")
	}
	intPart, fracPart, hasDot := strings.Cut(num, ".")
	if intPart == "" || strings.Contains(fracPart, ".") || (hasDot && fracPart == "") {
		return bad("has a malformed number %q", num)
	}
	shift, err := parseSuffix(suffix)
	if err != nil {
		return bad("has an %v", err)
	}

	// value = (intPart.fracPart) * 2^shift, computed exactly.
	v := new(big.Int)
	if _, ok := v.SetString(intPart+fracPart, 10); !ok {
		return bad("has a malformed number %q", num)
	}
	v.Lsh(v, shift)
	if len(fracPart) > 0 {
		den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(fracPart))), nil)
		var rem big.Int
		v.QuoRem(v, den, &rem)
		if rem.Sign() != 0 {
			return bad("is not a whole number of bytes")
		}
	}
	if !v.IsInt64() {
		return bad("is too large (maximum %d bytes)", int64(math.MaxInt64))
	}
	return v.Int64(), nil
}

// A SizeError is a size that does not parse: the text and what is wrong
// with it, apart, so that a caller that names the text itself (a flag's
// error) says the problem alone.
type SizeError struct {
	Input   string // the text as given
	Problem string // naming neither the text nor "size": "is negative"
}

func (e *SizeError) Error() string { return fmt.Sprintf("size %q %s", e.Input, e.Problem) }

// parseSuffix returns the power-of-two shift of a unit suffix.
func parseSuffix(suf string) (uint, error) {
	switch suf {
	case "", "b", "B":
		return 0, nil
	}
	idx := strings.IndexByte(unitLetters, lower(suf[0]))
	if idx < 0 {
		return 0, fmt.Errorf("unknown unit %q: want k, m, g, t, p or e (binary, optionally with i, iB or B)", suf)
	}
	switch suf[1:] {
	case "", "i", "iB", "ib", "B", "b":
	default:
		return 0, fmt.Errorf("unknown unit %q: want k, m, g, t, p or e (binary, optionally with i, iB or B)", suf)
	}
	return uint(10 * (idx + 1)), nil
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// FormatSize prints n in the largest binary unit that divides it exactly,
// like qemu: 8192 → "8k", 2097152 → "2m", 212992 → "208k". Values that are
// not whole multiples of 1 KiB are printed as plain bytes (1000 → "1000",
// 1536 → "1536"). ParseSize(FormatSize(n)) == n for every n ≥ 0.
func FormatSize(n int64) string {
	if n == 0 {
		return "0"
	}
	for i := len(unitLetters) - 1; i >= 0; i-- {
		u := int64(1) << (10 * (i + 1))
		if n%u == 0 {
			return strconv.FormatInt(n/u, 10) + unitLetters[i:i+1]
		}
	}
	return strconv.FormatInt(n, 10)
}

var byteUnits = [...]string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

// FormatBytes prints a byte count for display with binary units: whole
// values without decimals ("512 B", "208 KiB", "2 MiB"), others with two
// decimals below 100 ("1.50 GiB") and one from 100 up ("208.5 KiB").
// Byte counts below 1 KiB are rounded to whole bytes.
func FormatBytes(n float64) string {
	return formatBinary(n, "", func(v float64, unit int) string {
		switch {
		case unit == 0 || v == math.Trunc(v):
			return strconv.FormatFloat(v, 'f', 0, 64)
		case v < 100:
			return strconv.FormatFloat(v, 'f', 2, 64)
		default:
			return strconv.FormatFloat(v, 'f', 1, 64)
		}
	})
}

// FormatRate prints a rate in bytes per second with binary units and
// about three significant digits, like every other figure: "935 MiB/s",
// "0.99 GiB/s", "12.3 GiB/s", whole bytes below 1 KiB/s ("512 B/s"). The
// unit moves up once the number would need a fourth digit (from 999.5), so
// a rate near 1 GiB/s reads "0.99 GiB/s", not "1012.4 MiB/s" that then
// jumps to "1.02 GiB/s". NaN and infinities print as themselves.
func FormatRate(bytesPerSec float64) string {
	v := bytesPerSec
	if s, ok := nonFinite(v); ok {
		return s
	}
	i := 0
	for i < len(byteUnits)-1 && math.Abs(v) >= 999.5 {
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(v, 'f', 0, 64) + " B/s"
	}
	return Sig(v) + " " + byteUnits[i] + "/s"
}

// RateUnit is the binary unit a chart axis of rates up to maxBps is drawn
// in: its divisor and name (MiB/s for no rate at all).
func RateUnit(maxBps float64) (float64, string) {
	switch {
	case math.IsNaN(maxBps) || maxBps <= 0:
		return float64(MiB), "MiB/s"
	case maxBps >= float64(GiB):
		return float64(GiB), "GiB/s"
	case maxBps >= float64(MiB):
		return float64(MiB), "MiB/s"
	case maxBps >= float64(KiB):
		return float64(KiB), "KiB/s"
	}
	return 1, "B/s"
}

// Sig prints a figure with about three significant digits: "9.80",
// "16.4", "935". The bounds are where rounding carries into a fourth digit
// (9.996 is "10.0", not "10.00").
func Sig(v float64) string {
	a := math.Abs(v)
	switch {
	case a < 9.995:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < 99.95:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
}

// Fixed prints v with prec decimals, for tables that align a column.
func Fixed(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// FormatRatio prints a ratio b/a as "2.40x": two decimals, and three
// significant digits below 0.1 ("0.000453x", where two decimals would
// print a ratio of 1 to 2208 as "0.00x", which reads as none at all),
// none from 100 ("2208x").
func FormatRatio(r float64) string {
	if r > 0 && r < 0.1 {
		r = round3(r) // 0.09996 is 0.10x
	}
	switch {
	case r > 0 && r < 0.1:
		return ThreeSig(r) + "x"
	case r >= 100:
		return strconv.FormatFloat(r, 'f', 0, 64) + "x"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "x"
}

// ThreeSig prints v > 0 with three significant digits in plain decimals
// ("0.000453", "0.0122", "0.500"): a small figure that a column's fixed
// decimals would print as 0, which reads as none at all.
func ThreeSig(v float64) string {
	v = round3(v)
	return strconv.FormatFloat(v, 'f', max(2-int(math.Floor(math.Log10(v))), 0), 64)
}

// round3 rounds v to three significant digits.
func round3(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return r
}

// FormatClock prints seconds as m:ss, or h:mm:ss from an hour; negative
// and NaN read 0:00.
func FormatClock(sec float64) string {
	if sec < 0 || math.IsNaN(sec) {
		sec = 0
	}
	s := int(sec)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// formatBinary scales |n| into [0, 1024) of some unit, formats it with num
// and moves up one unit when rounding reaches 1024 ("1024.0 MiB/s" becomes
// "1.00 GiB/s").
func formatBinary(n float64, per string, num func(v float64, unit int) string) string {
	if s, ok := nonFinite(n); ok {
		return s
	}
	sign := ""
	if n < 0 {
		sign = "-"
		n = -n
	}
	unit := 0
	v := n
	for v >= 1024 && unit < len(byteUnits)-1 {
		v /= 1024
		unit++
	}
	s := num(v, unit)
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 1024 && unit < len(byteUnits)-1 {
		v /= 1024
		unit++
		s = num(v, unit)
	}
	if s == "0" || strings.Trim(s, "0.") == "" {
		sign = "" // no "-0 B"
	}
	return sign + s + " " + byteUnits[unit] + per
}

// nonFinite is how NaN and the infinities print in every figure — as
// themselves: "NaN", "+Inf", "-Inf" — and whether v is one of them.
func nonFinite(v float64) (string, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64), true
	}
	return "", false
}

// csvDigits is the significant digits a CSV number keeps: more than any
// of our measurements holds (a clock read to the nanosecond over a day is
// 14), few enough that the last bits of float arithmetic drop out.
const csvDigits = 12

// CSVNumber is a number for a CSV cell: rounded to csvDigits significant
// digits, then printed in the shortest plain form that reads back to that
// (0.0405, not 0.040499999999999994; 8589934592, not 8.589934592e+09).
func CSVNumber(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', csvDigits, 64), 64)
	if err != nil {
		r = v
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}
