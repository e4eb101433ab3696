//go:build !linux && !darwin

package sockdiag

import "context"

// Conn is a NETLINK_SOCK_DIAG socket; there is none off Linux.
type Conn struct{}

// Dial reports that sock_diag is not available here.
func Dial() (*Conn, error) { return nil, notHere("socket diagnostics") }

// Close does nothing.
func (c *Conn) Close() error { return nil }

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
