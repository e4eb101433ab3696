//go:build !linux

package interop

import "syscall"

// childProcAttr: no parent-death signal outside Linux; the cleanup and the
// 5-minute context still stop every child.
func childProcAttr() *syscall.SysProcAttr { return nil }
