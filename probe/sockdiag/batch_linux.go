package sockdiag

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxBatch bounds the lookups of one sendmsg, so that their replies (a
// kilobyte or two of skb each) fit the socket's receive buffer: the kernel
// drops a reply that does not fit, and the batch would then wait for it in
// vain.
const maxBatch = 64

// replySlots is how many reply datagrams one recvmmsg takes. An exact
// lookup's reply is at most a page (unix_diag_get_exact gives up beyond);
// the kernel sizes a dump's datagrams to the largest buffer a read offered
// (netlink_dump, up to 32 KiB), so 8 KiB slots get 8 KiB datagrams.
const (
	replySlots   = 16
	replySlotLen = 8 << 10
)

// mmsgState is the recvmmsg scaffolding a Conn keeps from batch to batch.
type mmsgState struct {
	hdrs []unix.Mmsghdr
	iovs []unix.Iovec
	bufs []byte
}

func (m *mmsgState) init() {
	if m.hdrs != nil {
		return
	}
	m.hdrs = make([]unix.Mmsghdr, replySlots)
	m.iovs = make([]unix.Iovec, replySlots)
	m.bufs = make([]byte, replySlots*replySlotLen)
	for i := range m.hdrs {
		m.iovs[i].Base = &m.bufs[i*replySlotLen]
		m.iovs[i].SetLen(replySlotLen)
		m.hdrs[i].Hdr.Iov = &m.iovs[i]
		m.hdrs[i].Hdr.SetIovlen(1)
	}
}

// exactBatch does the lookups of reqs and puts each answer in res (which
// has their length). The error is for the batch as a whole (the socket
// failed); a socket that is gone is its own res entry's error. The caller
// holds c.mu or owns c alone.
func (c *Conn) exactBatch(reqs []exactReq, res []exactRes) error {
	for start := 0; start < len(reqs); start += maxBatch {
		end := min(start+maxBatch, len(reqs))
		if err := c.exactChunk(reqs[start:end], res[start:end]); err != nil {
			return err
		}
	}
	return nil
}

func (c *Conn) exactChunk(reqs []exactReq, res []exactRes) error {
	if c.fd < 0 {
		return fmt.Errorf("sock_diag: connection closed")
	}
	base := c.seq + 1
	c.seq += uint32(len(reqs))
	c.req = appendExactRequests(c.req[:0], base, reqs)
	for i := range res {
		res[i] = exactRes{err: errNoReply}
	}
	if err := c.send(); err != nil {
		return err
	}
	for pending := len(reqs); pending > 0; {
		_, err := c.takeDatagrams(func(d []byte) (bool, error) {
			i, err := takeExactReply(d, base, reqs, res, &c.scratch)
			if err != nil {
				return false, c.abandon(err)
			}
			if i >= 0 {
				pending--
			}
			return false, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// The kernel answers a sock_diag request inside the sendto (an exact
// lookup's reply, a dump's first datagram) and makes each further datagram
// of a dump inside the recvmsg that makes room for it, so neither call
// waits: they take tens of microseconds of kernel time, not of waiting.
// They are made as raw system calls, which the Go scheduler does not see:
// a plain one that long lets sysmon hand the goroutine's P to another
// thread and wake it, 200 times a second, which cost more than the
// lookups themselves (measured: sysmon and futex wake-ups were a third of
// the sampler's CPU time). A read that would wait (EAGAIN on the raw,
// non-blocking try) is redone as a plain, blocking one.

// send sends c.req to the kernel.
func (c *Conn) send() error {
	to := unix.RawSockaddrNetlink{Family: unix.AF_NETLINK}
	for {
		_, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(c.fd),
			uintptr(unsafe.Pointer(&c.req[0])), uintptr(len(c.req)), 0,
			uintptr(unsafe.Pointer(&to)), unix.SizeofSockaddrNetlink)
		switch errno {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return fmt.Errorf("sock_diag: send request: %w", errno)
	}
}

// recvReplies takes the datagrams waiting, up to replySlots, in one
// recvmmsg; if none is there yet it waits for one, up to the receive
// timeout.
func (c *Conn) recvReplies() (int, error) {
	for {
		n, _, errno := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(c.fd),
			uintptr(unsafe.Pointer(&c.mm.hdrs[0])), uintptr(len(c.mm.hdrs)), unix.MSG_DONTWAIT, 0, 0)
		if errno == unix.EAGAIN {
			n, _, errno = unix.Syscall6(unix.SYS_RECVMMSG, uintptr(c.fd),
				uintptr(unsafe.Pointer(&c.mm.hdrs[0])), uintptr(len(c.mm.hdrs)), unix.MSG_WAITFORONE, 0, 0)
		}
		switch errno {
		case 0:
			return int(n), nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, fmt.Errorf("sock_diag: no answer from the kernel within %d s", replyTimeout)
		}
		return 0, fmt.Errorf("sock_diag: receive answers: %w", errno)
	}
}
