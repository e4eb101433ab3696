package platform

import (
	"golang.org/x/sys/unix"
)

// Native are the running OS's rules: macOS stores requests as given and
// bounds them by kern.ipc.maxsockbuf (XNURules); unix stream sockets
// start at net.local.stream.sendspace (8 KiB).
var Native Rules = XNURules{}

// readLimit reads a sysctl through x/sys: kern.ipc.maxsockbuf and
// kern.ipc.nmbclusters are 32-bit, some others 64-bit.
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

func kernelRelease() string {
	v, _ := unix.Sysctl("kern.osrelease")
	return v
}

func kernelVersion() string {
	v := kernelRelease()
	if v == "" {
		return "Darwin"
	}
	return "Darwin " + v
}

func sysctlCPUModel() string {
	v, _ := unix.Sysctl("machdep.cpu.brand_string")
	return v
}
