package sockdiag

import (
	"encoding/binary"
	"fmt"
	"syscall"
)

// Netlink and sock_diag numbers, from the kernel's UAPI headers
// (linux/netlink.h, linux/sock_diag.h). They are written out here rather
// than taken from x/sys/unix so that the parsers build, and are fuzzed, on
// every OS: netlink's byte layout does not depend on where it is parsed.
const (
	nlmsgHdrLen  = 16 // struct nlmsghdr: len u32, type u16, flags u16, seq u32, pid u32
	nlmsgAlignTo = 4
	nlaHdrLen    = 4 // struct nlattr: len u16, type u16
	nlaAlignTo   = 4

	nlmsgNoop    = 0x1
	nlmsgError   = 0x2
	nlmsgDone    = 0x3
	nlmsgOverrun = 0x4

	nlmFRequest = 0x1
	nlmFMulti   = 0x2
	nlmFAck     = 0x4
	nlmFRoot    = 0x100
	nlmFMatch   = 0x200
	nlmFDump    = nlmFRoot | nlmFMatch

	nlaTypeMask = 0x3fff // clears NLA_F_NESTED and NLA_F_NET_BYTEORDER

	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY

	afUnix  = 1
	afInet  = 2
	afInet6 = 10

	ipprotoTCP = 6
)

// noCookie is INET_DIAG_NOCOOKIE: a lookup with both halves of the cookie
// set to it matches the socket whatever its cookie.
const noCookie = ^uint32(0)

// Cookie is the kernel's identity of a socket object (sock_gen_cookie), as
// sock_diag reports it. An inode number can be reused once its socket is
// closed; an exact lookup that passes the cookie seen first fails with
// ESTALE, reported as ErrGone, instead of describing a newer socket.
type Cookie [2]uint32

// NoCookie matches any socket with the inode (or 4-tuple) asked for.
var NoCookie = Cookie{noCookie, noCookie}

// ne is the byte order of netlink headers and sock_diag structures: the
// host's. Ports and addresses inside inet_diag_sockid are big endian.
var ne = binary.NativeEndian

func nlAlign(n int) int { return (n + nlmsgAlignTo - 1) &^ (nlmsgAlignTo - 1) }

// message is one netlink message of a reply, its payload cut to its
// declared length.
type message struct {
	typ     uint16
	flags   uint16
	seq     uint32
	payload []byte
}

// splitMessages cuts one datagram of a netlink reply into its messages.
// A message whose declared length is shorter than its header or longer
// than what is left is an error: the datagram was truncated or is not
// netlink at all. The padding after the last message may be missing.
func splitMessages(b []byte, visit func(m message) (stop bool, err error)) error {
	for off := 0; off < len(b); {
		rest := b[off:]
		if len(rest) < nlmsgHdrLen {
			return fmt.Errorf("%w: %d bytes left at offset %d, less than a %d-byte netlink header",
				ErrMalformed, len(rest), off, nlmsgHdrLen)
		}
		n := int(ne.Uint32(rest[0:4]))
		if n < nlmsgHdrLen || n > len(rest) {
			return fmt.Errorf("%w: netlink message at offset %d says %d bytes, %d are there",
				ErrMalformed, off, n, len(rest))
		}
		m := message{
			typ:     ne.Uint16(rest[4:6]),
			flags:   ne.Uint16(rest[6:8]),
			seq:     ne.Uint32(rest[8:12]),
			payload: rest[nlmsgHdrLen:n],
		}
		stop, err := visit(m)
		if err != nil || stop {
			return err
		}
		off += min(nlAlign(n), len(rest))
	}
	return nil
}

// controlMessage handles the message types every netlink reply may carry.
// handled is false for a data message, which the caller parses itself.
// done is true when the reply is complete: NLMSG_DONE, or NLMSG_ERROR
// (which is then err, or nil for a bare acknowledgement).
func controlMessage(m message) (handled, done bool, err error) {
	switch m.typ {
	case nlmsgNoop:
		return true, false, nil
	case nlmsgOverrun:
		return true, true, fmt.Errorf("%w: the kernel reports a netlink overrun (data lost)", ErrMalformed)
	case nlmsgDone:
		// Since Linux 4.x NLMSG_DONE carries the dump's return code; a
		// negative one means the dump stopped on that error.
		if len(m.payload) >= 4 {
			if code := int32(ne.Uint32(m.payload[0:4])); code < 0 {
				return true, true, &KernelError{Errno: syscall.Errno(-code), Op: "dump"}
			}
		}
		return true, true, nil
	case nlmsgError:
		if len(m.payload) < 4 {
			return true, true, fmt.Errorf("%w: NLMSG_ERROR of %d bytes, no error code", ErrMalformed, len(m.payload))
		}
		code := int32(ne.Uint32(m.payload[0:4]))
		if code == 0 {
			return true, true, nil
		}
		if code > 0 {
			return true, true, fmt.Errorf("%w: NLMSG_ERROR with positive code %d", ErrMalformed, code)
		}
		return true, true, &KernelError{Errno: syscall.Errno(-code), Op: "request"}
	}
	return false, false, nil
}

// walkAttrs visits the netlink attributes packed in b. Unknown types are
// the visitor's to skip; a length that does not fit is an error.
func walkAttrs(b []byte, visit func(typ uint16, val []byte) error) error {
	for off := 0; off < len(b); {
		rest := b[off:]
		if len(rest) < nlaHdrLen {
			// The kernel pads only to 4 bytes, so fewer than a header's
			// worth of trailing bytes is not padding.
			return fmt.Errorf("%w: %d stray bytes after the attributes", ErrMalformed, len(rest))
		}
		n := int(ne.Uint16(rest[0:2]))
		if n < nlaHdrLen || n > len(rest) {
			return fmt.Errorf("%w: attribute at offset %d says %d bytes, %d are there",
				ErrMalformed, off, n, len(rest))
		}
		if err := visit(ne.Uint16(rest[2:4])&nlaTypeMask, rest[nlaHdrLen:n]); err != nil {
			return err
		}
		off += min((n+nlaAlignTo-1)&^(nlaAlignTo-1), len(rest))
	}
	return nil
}

// attrU32 reads an attribute that must hold at least a u32.
func attrU32(name string, val []byte) (uint32, error) {
	if len(val) < 4 {
		return 0, fmt.Errorf("%w: %s attribute of %d bytes, want 4", ErrMalformed, name, len(val))
	}
	return ne.Uint32(val[0:4]), nil
}

// appendHeader writes a request's nlmsghdr; the payload follows.
func appendHeader(b []byte, payloadLen int, flags uint16, seq uint32) []byte {
	b = ne.AppendUint32(b, uint32(nlmsgHdrLen+payloadLen))
	b = ne.AppendUint16(b, sockDiagByFamily)
	b = ne.AppendUint16(b, flags)
	b = ne.AppendUint32(b, seq)
	return ne.AppendUint32(b, 0) // pid 0: to the kernel
}

// parseDiag parses one datagram of a sock_diag reply to the request
// numbered seq, appending each socket parse makes of a SOCK_DIAG_BY_FAMILY
// message to dst: the rules ParseUnixDiag states, for unix_diag and
// inet_diag alike (what names the reply in errors: "a unix_diag").
func parseDiag[T any](b []byte, seq uint32, dst []T, what string, parse func([]byte) (T, error)) (out []T, done bool, err error) {
	err = splitMessages(b, func(m message) (bool, error) {
		if m.seq != seq {
			return false, nil
		}
		handled, end, cerr := controlMessage(m)
		if handled {
			done = done || end
			return end, cerr
		}
		if m.typ != sockDiagByFamily {
			return true, fmt.Errorf("%w: message type %d in %s reply", ErrMalformed, m.typ, what)
		}
		s, perr := parse(m.payload)
		if perr != nil {
			return true, perr
		}
		dst = append(dst, s)
		if m.flags&nlmFMulti == 0 {
			done = true
			return true, nil
		}
		return false, nil
	})
	return dst, done, err
}
