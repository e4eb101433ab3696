//go:build !linux

package nbd

// SetEventLoop reports false: there is no ppoll reader here to turn it.
func (c *Conn) SetEventLoop(on bool) (bool, error) { return false, nil }

func (c *Conn) closeLoop() {}

func (l *eventLoop) turn() bool { return false }
