package platform

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Native are the running OS's rules.
var Native Rules = LinuxRules{}

func readLimit(name string) (int, error) {
	b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(name, ".", "/"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func uname() (sys, release string) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", ""
	}
	return unix.ByteSliceToString(u.Sysname[:]), unix.ByteSliceToString(u.Release[:])
}

func kernelRelease() string { _, r := uname(); return r }

func kernelVersion() string {
	sys, rel := uname()
	if sys == "" {
		return "unknown"
	}
	return sys + " " + rel
}

func sysctlCPUModel() string { return "" }
