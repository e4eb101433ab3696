package nbd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// ClientOptions configure the handshake of a Client.
type ClientOptions struct {
	Export string
	// NoStructuredReply skips STRUCTURED_REPLY (to test simple replies).
	NoStructuredReply bool
	// BlockStatus asks for the base:allocation context so BlockStatus works.
	BlockStatus bool
	// HandshakeTimeout bounds the negotiation; 0 → DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// SndBuf and RcvBuf, when nonzero, are applied to the socket before
	// the handshake.
	SndBuf, RcvBuf int
	// Reader is how the client's reader waits for the socket after the
	// handshake: ReaderPoll (ppoll on its own thread, as qemu's
	// client; Linux only, elsewhere the netpoller) or ReaderNetpoller
	// (Go's netpoller, also for "").
	Reader string
}

// ExportInfo is what the handshake learned about the export.
type ExportInfo struct {
	Size       uint64
	Flags      uint16
	Structured bool
	MetaID     uint32 // the id of base:allocation (qemu-nbd uses 0)
	HasMeta    bool   // base:allocation was negotiated
	BlockMin   uint32
	BlockPref  uint32
	BlockMax   uint32
	UsedGo     bool // false when the server needed the EXPORT_NAME fallback
}

// CanMultiConn reports whether the server allows several coherent connections.
func (e ExportInfo) CanMultiConn() bool { return e.Flags&FlagCanMultiConn != 0 }

// ReadOnly reports whether the export refuses writes.
func (e ExportInfo) ReadOnly() bool { return e.Flags&FlagReadOnly != 0 }

// Dial connects to an NBD URI and negotiates the export named in it (opts.Export
// is ignored in favour of the URI's).
func Dial(ctx context.Context, u URI, opts ClientOptions) (*Client, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, u.Network(), u.Address())
	if err != nil {
		return nil, fmt.Errorf("nbd: connecting to %s: %w", u, err)
	}
	opts.Export = u.Export
	c, err := NewClient(ctx, nc, opts)
	if err != nil {
		return nil, fmt.Errorf("nbd: handshake with %s: %w", u, err)
	}
	return c, nil
}

// NewClient runs the handshake on an established connection. On error the
// connection is closed.
func NewClient(ctx context.Context, nc net.Conn, opts ClientOptions) (*Client, error) {
	c, err := NewConn(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	if opts.SndBuf > 0 {
		if _, err := c.SetBuffer(SendBuf, opts.SndBuf); err != nil {
			nc.Close()
			return nil, err
		}
	}
	if opts.RcvBuf > 0 {
		if _, err := c.SetBuffer(RecvBuf, opts.RcvBuf); err != nil {
			nc.Close()
			return nil, err
		}
	}
	to := opts.HandshakeTimeout
	if to <= 0 {
		to = DefaultHandshakeTimeout
	}
	dl := time.Now().Add(to)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	nc.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	info, err := clientHandshake(c, opts)
	stop()
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	nc.SetDeadline(time.Time{})
	if opts.Reader == ReaderPoll {
		if err := c.usePollWait(); err != nil && !errors.Is(err, errPollUnsupported) {
			c.Close()
			return nil, fmt.Errorf("nbd: moving the socket to the ppoll reader: %w", err)
		}
	}
	return newClient(c, info), nil
}

// clientHandshake negotiates fixed newstyle: the greeting, structured
// replies and the allocation meta context when asked for, then GO (or
// EXPORT_NAME with a server without it).
func clientHandshake(c *Conn, opts ClientOptions) (ExportInfo, error) {
	var info ExportInfo
	noZeroes, err := clientGreeting(c)
	if err != nil {
		return info, err
	}
	if !opts.NoStructuredReply {
		if err := sendOption(c, OptStructuredReply, nil); err != nil {
			return info, err
		}
		typ, _, err := readOptReply(c, OptStructuredReply)
		if err != nil {
			return info, err
		}
		info.Structured = typ == RepAck // an error reply means simple replies
	}
	if opts.BlockStatus && info.Structured {
		if err := setMetaContext(c, opts.Export, &info); err != nil {
			return info, err
		}
	}
	return goExport(c, opts, info, noZeroes)
}

// clientGreeting reads the server's greeting and answers with the client
// flags; it reports whether the server leaves out the zero padding.
func clientGreeting(c *Conn) (noZeroes bool, err error) {
	var g [greetingSize]byte
	if err := c.ReadFull(g[:16]); err != nil {
		return false, fmt.Errorf("reading greeting: %w", err)
	}
	if m := binary.BigEndian.Uint64(g[0:]); m != magicNBD {
		return false, protoErrorf("greeting magic 0x%016x is not NBDMAGIC", m)
	}
	if m := binary.BigEndian.Uint64(g[8:]); m != magicIHaveOpt {
		if m == 0x00420281861253 {
			return false, errors.New("server speaks the oldstyle protocol, which is not supported")
		}
		return false, protoErrorf("greeting magic 0x%016x is not IHAVEOPT", m)
	}
	if err := c.ReadFull(g[16:18]); err != nil {
		return false, fmt.Errorf("reading handshake flags: %w", err)
	}
	hf := binary.BigEndian.Uint16(g[16:])
	if hf&flagFixedNewstyle == 0 {
		return false, errors.New("server does not support fixed newstyle negotiation")
	}
	cf := clientFixedNewstyle
	noZeroes = hf&flagNoZeroes != 0
	if noZeroes {
		cf |= clientNoZeroes
	}
	var b4 [4]byte
	binary.BigEndian.PutUint32(b4[:], cf)
	if _, err := c.Write(b4[:]); err != nil {
		return false, err
	}
	return noZeroes, nil
}

// setMetaContext asks for base:allocation on export and notes its id in
// info when the server grants it.
func setMetaContext(c *Conn, export string, info *ExportInfo) error {
	p := make([]byte, 0, 12+len(export)+len(MetaContextBaseAllocation))
	p = binary.BigEndian.AppendUint32(p, uint32(len(export)))
	p = append(p, export...)
	p = binary.BigEndian.AppendUint32(p, 1)
	p = binary.BigEndian.AppendUint32(p, uint32(len(MetaContextBaseAllocation)))
	p = append(p, MetaContextBaseAllocation...)
	if err := sendOption(c, OptSetMetaContext, p); err != nil {
		return err
	}
	for {
		typ, data, err := readOptReply(c, OptSetMetaContext)
		if err != nil {
			return err
		}
		if typ == RepAck || typ&repErrBit != 0 {
			return nil
		}
		if typ == RepMetaContext && len(data) >= 4 && string(data[4:]) == MetaContextBaseAllocation {
			info.MetaID = binary.BigEndian.Uint32(data)
			info.HasMeta = true
		}
	}
}

// goExport sends GO, asking for the block size constraints, and reads
// the export's information; a server without GO gets EXPORT_NAME.
func goExport(c *Conn, opts ClientOptions, info ExportInfo, noZeroes bool) (ExportInfo, error) {
	p := make([]byte, 0, 8+len(opts.Export))
	p = binary.BigEndian.AppendUint32(p, uint32(len(opts.Export)))
	p = append(p, opts.Export...)
	p = binary.BigEndian.AppendUint16(p, 1)
	p = binary.BigEndian.AppendUint16(p, InfoBlockSize)
	if err := sendOption(c, OptGo, p); err != nil {
		return info, err
	}
	gotExport := false
	for {
		typ, data, err := readOptReply(c, OptGo)
		if err != nil {
			return info, err
		}
		switch {
		case typ == RepInfo:
			got, err := goInfo(data, &info)
			if err != nil {
				return info, err
			}
			gotExport = gotExport || got
		case typ == RepAck:
			if !gotExport {
				return info, protoErrorf("GO acknowledged without INFO_EXPORT")
			}
			info.UsedGo = true
			return info, nil
		case typ == RepErrUnsup:
			return exportName(c, opts, info, noZeroes)
		case typ&repErrBit != 0:
			return info, &OptionError{Option: OptGo, Type: typ, Message: string(data)}
		}
	}
}

// goInfo takes an INFO reply of GO into info; it reports whether it was
// INFO_EXPORT (size and flags), which GO must send.
func goInfo(data []byte, info *ExportInfo) (export bool, err error) {
	if len(data) < 2 {
		return false, protoErrorf("INFO reply of %d bytes", len(data))
	}
	switch binary.BigEndian.Uint16(data) {
	case InfoExport:
		if len(data) != 12 {
			return false, protoErrorf("INFO_EXPORT of %d bytes, want 12", len(data))
		}
		info.Size = binary.BigEndian.Uint64(data[2:])
		info.Flags = binary.BigEndian.Uint16(data[10:])
		return true, nil
	case InfoBlockSize:
		if len(data) != 14 {
			return false, protoErrorf("INFO_BLOCK_SIZE of %d bytes, want 14", len(data))
		}
		info.BlockMin = binary.BigEndian.Uint32(data[2:])
		info.BlockPref = binary.BigEndian.Uint32(data[6:])
		info.BlockMax = binary.BigEndian.Uint32(data[10:])
	}
	return false, nil
}

// exportName is the fallback for servers without GO.
func exportName(c *Conn, opts ClientOptions, info ExportInfo, noZeroes bool) (ExportInfo, error) {
	if err := sendOption(c, OptExportName, []byte(opts.Export)); err != nil {
		return info, err
	}
	n := 10 + exportNameTail
	if noZeroes {
		n = 10
	}
	b := make([]byte, n)
	if err := c.ReadFull(b); err != nil {
		if errors.Is(err, io.EOF) {
			return info, fmt.Errorf("server closed the connection: export %q refused", opts.Export)
		}
		return info, err
	}
	info.Size = binary.BigEndian.Uint64(b)
	info.Flags = binary.BigEndian.Uint16(b[8:])
	return info, nil
}

func sendOption(c *Conn, opt uint32, data []byte) error {
	b := make([]byte, optHeaderSize, optHeaderSize+len(data))
	binary.BigEndian.PutUint64(b, magicIHaveOpt)
	binary.BigEndian.PutUint32(b[8:], opt)
	binary.BigEndian.PutUint32(b[12:], uint32(len(data)))
	b = append(b, data...)
	_, err := c.Write(b)
	return err
}

// readOptReply reads one option reply; error replies are returned as a
// type with bit 31 set, not as an error, so callers can fall back.
func readOptReply(c *Conn, opt uint32) (typ uint32, data []byte, err error) {
	var h [optReplyHdrSize]byte
	if err := c.ReadFull(h[:]); err != nil {
		return 0, nil, fmt.Errorf("reading reply to %s: %w", optName(opt), err)
	}
	if m := binary.BigEndian.Uint64(h[0:]); m != magicOptReply {
		return 0, nil, protoErrorf("option reply magic 0x%016x", m)
	}
	if o := binary.BigEndian.Uint32(h[8:]); o != opt {
		return 0, nil, protoErrorf("reply for option %s while waiting for %s", optName(o), optName(opt))
	}
	typ = binary.BigEndian.Uint32(h[12:])
	n := binary.BigEndian.Uint32(h[16:])
	if n > maxOptionLength {
		return 0, nil, protoErrorf("option reply of %d bytes", n)
	}
	data = make([]byte, n)
	if err := c.ReadFull(data); err != nil {
		return 0, nil, fmt.Errorf("reading reply to %s: %w", optName(opt), err)
	}
	return typ, data, nil
}
