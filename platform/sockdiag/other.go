//go:build !linux

package sockdiag

import (
	"context"
	"runtime"
)

// notHere is the error every entry point that needs the kernel gives off
// Linux.
func notHere(what string) error {
	return &NotAvailableError{What: what, Reason: notAvailableReason(runtime.GOOS)}
}

// Conn is a NETLINK_SOCK_DIAG socket; there is none off Linux.
type Conn struct{}

// Dial reports that sock_diag is not available here.
func Dial() (*Conn, error) { return nil, notHere("socket diagnostics") }

// Close does nothing.
func (c *Conn) Close() error { return nil }

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

// Describe reports that sock_diag is not available here.
func (c *Conn) Describe([]FD) ([]Socket, error) { return nil, notHere("socket diagnostics") }

// ProcessSockets reports that /proc is not available here.
func ProcessSockets(int) ([]FD, error) { return nil, notHere("a process's sockets") }

// Tree reports that /proc is not available here.
func Tree(int) ([]int, error) { return nil, notHere("a process tree") }

// TreeSockets reports that /proc is not available here.
func TreeSockets(int) ([]FD, error) { return nil, notHere("a process tree's sockets") }

// StartSampler reports that socket fill cannot be sampled here.
func StartSampler(context.Context, SamplerConfig) (*Sampler, error) {
	return nil, notHere("socket fill")
}
