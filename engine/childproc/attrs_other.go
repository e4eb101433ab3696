//go:build !linux

package childproc

import (
	"os/exec"
	"syscall"
)

// setChildAttrs keeps a child out of the terminal's process group; without
// a parent-death signal it notices the controller's death by EOF on stdin.
func setChildAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
