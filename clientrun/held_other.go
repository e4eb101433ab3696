//go:build !linux

package clientrun

import "syscall"

// heldAttrs are a held process's attributes: its own process group (no
// parent-death signal here).
func heldAttrs() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
