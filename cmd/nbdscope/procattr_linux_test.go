package main

import "syscall"

// childAttrs makes a spawned test server die with the test binary.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
