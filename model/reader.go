package model

import "nbdscope/nbd"

// ReaderMode is how our load's reader waits for its socket
// (SideConfig.Reader): as qemu's client does, asleep in ppoll(2) on a
// thread of its own and reading until EAGAIN (poll), or in Go's netpoller
// (netpoller). The wait decides how many bytes are queued when the reader
// next looks, and so its receive calls per 2 MiB (docs/real-clients.md).
type ReaderMode string

// Reader modes.
const (
	ReaderPoll      ReaderMode = nbd.ReaderPoll
	ReaderNetpoller ReaderMode = nbd.ReaderNetpoller
)

// DefaultReader is the reader of a side that names none: qemu's ppoll
// wait where it is built (Linux), else Go's netpoller.
func DefaultReader() ReaderMode {
	if nbd.PollReaderSupported {
		return ReaderPoll
	}
	return ReaderNetpoller
}

func readerNames() []string { return []string{string(ReaderPoll), string(ReaderNetpoller)} }

// validReader reports whether m is a reader this build can run.
func validReader(m ReaderMode) bool {
	return m == ReaderNetpoller || (m == ReaderPoll && nbd.PollReaderSupported)
}
