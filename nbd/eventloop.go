package nbd

import "sync/atomic"

// qemu-img's event loop, turned where it turns it (the load switches it on
// per connection with SetEventLoop, in the scan consume mode).
//
// When qemu-img's NBD client finds the socket empty (recvmsg says EAGAIN)
// its coroutine yields (qio_channel_yield) to the main loop, which goes
// round before it can sleep: glib's prepare and check, the AioContext's
// event notifiers written (aio_notify) and cleared (aio_notify_accept,
// a read of the eventfd), a ppoll. Counted with perf stat on syscall
// tracepoints while qemu-img convert read 4 GiB from nbdscope's server
// (2048 requests; recvmsg exits with -EAGAIN counted by a filter):
//
//	buffer   EAGAIN/req   read/req   write/req   ppoll/req
//	2m       0.52         0.54       1.05        0.56
//	default  2.72         2.73       5.44        4.42
//
// one read and two writes of a notifier per EAGAIN, and a ppoll or more.
// That round takes microseconds in which the server goes on queueing, so
// the ppoll more often finds the socket readable and does not sleep: the
// turn is part of how qemu-img waits, and of how few wake-ups it makes
// for its EAGAIN.
//
// With the event loop on, the ppoll reader does the same at each EAGAIN:
// two writes of its own eventfd, a ppoll with no timeout on the socket
// and the eventfd (readable, so it returns at once), and the read that
// clears it; if the socket was readable by then it reads again without a
// sleep, else it sleeps in ppoll as before. Those are not receive calls
// and are not counted as such. It is the ppoll reader's (Linux);
// elsewhere SetEventLoop reports false and nothing changes.

// eventLoop is a connection's notifier and its turn count.
type eventLoop struct {
	on    atomic.Bool
	turns atomic.Uint64
	efd   int // the eventfd, made by the first SetEventLoop(true)
	sock  int // the polled socket's descriptor
}

// LoopTurns returns the event-loop turns this connection's reader made.
func (c *Conn) LoopTurns() uint64 {
	if l := c.loop.Load(); l != nil {
		return l.turns.Load()
	}
	return 0
}

// turnLoop makes one turn of the event loop when it is on, and reports
// whether the socket was readable by its end (the coroutine re-entered
// without a sleep).
func (c *Conn) turnLoop() bool {
	if l := c.loop.Load(); l != nil && l.on.Load() {
		l.turns.Add(1)
		return l.turn()
	}
	return false
}
