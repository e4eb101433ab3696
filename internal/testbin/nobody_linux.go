package testbin

import (
	"syscall"
	"testing"
)

// Nobody is the unprivileged user (and group) that permission tests run
// a process as.
const Nobody = 65534

// AsNobody is the SysProcAttr of a process that runs as Nobody, with the
// ambient capabilities caps (none when nil).
func AsNobody(caps []uintptr) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: Nobody, Gid: Nobody}, AmbientCaps: caps}
}

// RunAsNobody runs bin, a WorldExecutableCopy of the test binary, as
// Nobody with caps, as the helper role that env selects (HelperCommand,
// with extra), and returns what it printed; the test fails when it does
// not exit 0. It needs root.
func RunAsNobody(t testing.TB, bin string, caps []uintptr, env, role string, extra ...string) string {
	t.Helper()
	cmd := HelperCommand(bin, env, role, extra...)
	cmd.SysProcAttr = AsNobody(caps)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s=%s as nobody with caps %v: %v\n%s", env, role, caps, err, out)
	}
	return string(out)
}
