//go:build !linux

package nbd

// PollReaderSupported reports whether ReaderPoll is built on this system.
const PollReaderSupported = false

// usePollWait is not built here: the client keeps Go's netpoller.
func (c *Conn) usePollWait() error { return errPollUnsupported }

// closePolled is never reached: usePollWait never succeeds here.
func (c *Conn) closePolled() error { return errPollUnsupported }

// peekHangup has nothing to look at where the ppoll reader is not built.
func (c *Conn) peekHangup() error { return nil }
