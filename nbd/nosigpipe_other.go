//go:build !darwin

package nbd

import "syscall"

// noSigPipe is a no-op outside macOS: SO_NOSIGPIPE is a BSD option, and
// Linux has none (it has MSG_NOSIGNAL per send instead).
func noSigPipe(syscall.RawConn) error { return nil }

// NoSigPipeSet reports false: there is no such option here.
func (c *Conn) NoSigPipeSet() (bool, error) { return false, nil }
