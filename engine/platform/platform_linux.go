package platform

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"nbdscope/nbd"
)

// Linux doubles SO_SNDBUF/SO_RCVBUF requests and clamps them to
// net.core.wmem_max / rmem_max (unless the caller has CAP_NET_ADMIN and uses
// SO_SNDBUFFORCE, which we do not).
const doubles = true

var limitNames = []string{"net.core.wmem_max", "net.core.rmem_max", "net.core.wmem_default", "net.core.rmem_default"}

func readLimit(name string) (int, error) {
	b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(name, ".", "/"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func expectedEffective(requested int) int { return 2 * requested }

func limitFor(which nbd.SockBuf, requested int) (string, int) {
	if which == nbd.SendBuf {
		return "net.core.wmem_max", requested
	}
	return "net.core.rmem_max", requested
}

func fixFor(name string, value int) (fix, persist, where string) {
	return fmt.Sprintf("sudo sysctl -w %s=%d", name, value),
		fmt.Sprintf("%s = %d", name, value),
		"/etc/sysctl.d/90-nbdscope.conf"
}

func kernelVersion() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
}

func sysctlCPUModel() string { return "" }
