package childproc

import (
	"os/exec"
	"syscall"
)

// setChildAttrs makes a child die with the controller (SIGTERM as the
// parent-death signal, so it still removes its socket; the closed stdin pipe
// is the portable fallback) and keeps it out of the
// terminal's process group, so ctrl+c reaches only the controller, which
// then stops its children in order.
func setChildAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
}
