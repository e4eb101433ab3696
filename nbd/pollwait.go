package nbd

import "errors"

// How a client's reader waits for the socket (ClientOptions.Reader).
//
// qemu's NBD client (block/nbd.c, nbd/client.c) reads a reply in a
// coroutine: qio_channel_readv (io/channel-socket.c: one recvmsg(2) on a
// non-blocking socket) until the bytes it wants are in or the call says
// EAGAIN; on EAGAIN it yields (qio_channel_yield) to the one thread's
// event loop (util/aio-posix.c), which sleeps in ppoll(2) until the
// socket is readable and re-enters the coroutine, which reads again. All
// of it runs on one OS thread that sleeps only in ppoll.
//
// Go's netpoller does the waiting differently: a read that finds no data
// parks the goroutine, and whichever runtime thread is in epoll_wait, or
// spinning over a non-blocking netpoll, hands it back at the first bytes,
// often on another thread. ReaderPoll waits as qemu does.
const (
	// ReaderPoll: the reader runs on its own OS thread (readerthread.go
	// says how it keeps it without waking the runtime), reads with
	// recvfrom(MSG_DONTWAIT) until EAGAIN and then sleeps in ppoll(2) on
	// the socket, which is taken out of Go's netpoller. Linux only; on
	// other systems the client reads as with ReaderNetpoller.
	ReaderPoll = "poll"
	// ReaderNetpoller: Go's own non-blocking reads and netpoller.
	ReaderNetpoller = "netpoller"
)

// errPollUnsupported is returned where ReaderPoll is not built.
var errPollUnsupported = errors.New("nbd: the ppoll reader is Linux-only")
