package units

import (
	"fmt"
	"math"
	"strconv"
)

// RateScale is a fixed unit to show rates in, as iperf3's -f: binary bytes
// (GiB/s, MiB/s) or decimal bits (Gbit/s = 10⁹ bit/s, Mbit/s), the unit
// network people quote. Rates are kept in bytes per second; only their
// display changes.
type RateScale struct {
	Flag     string  // the name --rate-unit takes: gib, gbit, mib, mbit
	Letter   string  // iperf3's -f letter for it: G, g, M, m (case matters)
	Name     string  // "GiB/s", "Gbit/s"
	BytesPer float64 // bytes per second in one unit
	Decimals int     // decimals a table shows (Number)
}

// RateScales are the units --rate-unit offers, largest first.
var RateScales = []RateScale{
	{"gib", "G", "GiB/s", float64(GiB), 2},
	{"gbit", "g", "Gbit/s", 1e9 / 8, 2},
	{"mib", "M", "MiB/s", float64(MiB), 1},
	{"mbit", "m", "Mbit/s", 1e6 / 8, 0},
}

// ParseRateScale finds a unit by its flag name or by iperf3's -f letter
// (G: GBytes, which iperf3 counts in 1024s, as GiB; g: Gbits, in 1000s).
// iperf3's k, K, t and T are not offered: no NBD rate is shown in them.
func ParseRateScale(s string) (RateScale, error) {
	for _, u := range RateScales {
		if s == u.Flag || s == u.Letter {
			return u, nil
		}
	}
	return RateScale{}, fmt.Errorf("unknown rate unit %q: want gib, gbit, mib or mbit (or iperf3's G, g, M, m)", s)
}

// Number is bytesPerSec in the unit with the unit's decimals, for a
// table's column ("3.42"); NaN and infinities print as themselves.
func (u RateScale) Number(bytesPerSec float64) string {
	if math.IsNaN(bytesPerSec) || math.IsInf(bytesPerSec, 0) {
		return strconv.FormatFloat(bytesPerSec, 'f', -1, 64)
	}
	return strconv.FormatFloat(bytesPerSec/u.BytesPer, 'f', u.Decimals, 64)
}

// Format is bytesPerSec in the unit with about three significant digits
// and the unit's name: "3.42 GiB/s", "29.4 Gbit/s", "935 MiB/s".
func (u RateScale) Format(bytesPerSec float64) string {
	if math.IsNaN(bytesPerSec) || math.IsInf(bytesPerSec, 0) {
		return FormatRate(bytesPerSec)
	}
	return Sig(bytesPerSec/u.BytesPer) + " " + u.Name
}
