package clientrun

import "syscall"

// heldAttrs are a held process's attributes: its own process group, and
// SIGKILL when the process that started it dies (an nbdscope child killed
// outright must not leave a real server or client running behind it).
func heldAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
