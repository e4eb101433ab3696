//go:build !linux

package sockdiag

import "runtime"

// Off Linux there is no sock_diag: no listing of a namespace's sockets,
// and no lookup by inode. (macOS describes the descriptors of a process,
// xnu_darwin.go.)

// notHere is the error every entry point that needs the kernel gives off
// Linux.
func notHere(what string) error {
	return &NotAvailableError{What: what, Reason: notAvailableReason(runtime.GOOS)}
}

// UnixSockets reports that sock_diag is not available here.
func (c *Conn) UnixSockets(dst []UnixSocket) ([]UnixSocket, error) {
	return dst, notHere("socket diagnostics")
}

// UnixSocket reports that sock_diag is not available here.
func (c *Conn) UnixSocket(Inode, Cookie) (UnixSocket, error) {
	return UnixSocket{}, notHere("socket diagnostics")
}

// TCPSockets reports that sock_diag is not available here.
func (c *Conn) TCPSockets(dst []TCPSocket) ([]TCPSocket, error) {
	return dst, notHere("socket diagnostics")
}

// TCPSocket reports that sock_diag is not available here.
func (c *Conn) TCPSocket(TCPSocket) (TCPSocket, error) {
	return TCPSocket{}, notHere("socket diagnostics")
}
