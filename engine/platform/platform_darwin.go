package platform

import (
	"fmt"

	"golang.org/x/sys/unix"

	"nbdscope/nbd"
)

// macOS stores requests as given and bounds them by kern.ipc.maxsockbuf;
// unix stream sockets start at net.local.stream.sendspace (8 KiB).
const doubles = false

var limitNames = []string{"kern.ipc.maxsockbuf", "net.local.stream.sendspace", "net.local.stream.recvspace"}

func readLimit(name string) (int, error) {
	v, err := unix.SysctlUint32(name)
	if err != nil {
		v64, err2 := unix.SysctlUint64(name)
		if err2 != nil {
			return 0, err
		}
		return int(v64), nil
	}
	return int(v), nil
}

func expectedEffective(requested int) int { return requested }

func limitFor(which nbd.SockBuf, requested int) (string, int) {
	// maxsockbuf bounds the sum of both buffers plus overhead; ask for
	// enough headroom for both.
	return "kern.ipc.maxsockbuf", 4 * requested
}

func fixFor(name string, value int) (fix, persist, where string) {
	return fmt.Sprintf("sudo sysctl -w %s=%d", name, value),
		fmt.Sprintf("%s=%d", name, value),
		"/etc/sysctl.conf"
}

func kernelVersion() string {
	v, err := unix.Sysctl("kern.osrelease")
	if err != nil {
		return "Darwin"
	}
	return "Darwin " + v
}

func sysctlCPUModel() string {
	v, _ := unix.Sysctl("machdep.cpu.brand_string")
	return v
}
