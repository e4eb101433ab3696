package platform

import (
	"os"
	"strconv"
	"strings"
)

// UserHZ is USER_HZ, the unit of the times in /proc/stat and
// /proc/PID/stat (100 on every Linux nbdscope runs on).
const UserHZ = 100

func cpuBusy() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	// cpu user nice system idle iowait irq softirq steal guest guest_nice;
	// guest time is already in user, so it is not added again.
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	var busy float64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return 0, false
		}
		busy += v
	}
	return busy / UserHZ, true
}
