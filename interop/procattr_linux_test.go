package interop

import "syscall"

// childProcAttr makes a server child die with the test binary.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
