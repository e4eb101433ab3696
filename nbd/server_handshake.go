package nbd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

var errAborted = errors.New("nbd: client aborted the handshake")

func be16(b []byte, v uint16) { binary.BigEndian.PutUint16(b, v) }
func be32(b []byte, v uint32) { binary.BigEndian.PutUint32(b, v) }
func be64(b []byte, v uint64) { binary.BigEndian.PutUint64(b, v) }

// handshake runs the fixed-newstyle negotiation until the client enters
// transmission (GO or EXPORT_NAME) or leaves.
func (sc *serverConn) handshake(ctx context.Context) error {
	var g [greetingSize]byte
	be64(g[0:], magicNBD)
	be64(g[8:], magicIHaveOpt)
	be16(g[16:], flagFixedNewstyle|flagNoZeroes)
	if _, err := sc.c.Write(g[:]); err != nil {
		return err
	}
	var cf [4]byte
	if err := sc.c.ReadFull(cf[:]); err != nil {
		return err
	}
	flags := binary.BigEndian.Uint32(cf[:])
	if flags&^(clientFixedNewstyle|clientNoZeroes) != 0 {
		return fmt.Errorf("client sent unknown flags 0x%x", flags)
	}
	sc.noZeroes = flags&clientNoZeroes != 0
	fixed := flags&clientFixedNewstyle != 0

	var hdr [optHeaderSize]byte
	for {
		if ctx.Err() != nil {
			sc.optReply(0, RepErrShutdown, nil)
			return ctx.Err()
		}
		if err := sc.c.ReadFull(hdr[:]); err != nil {
			return err
		}
		oh, err := ParseOptionHeader(hdr[:])
		if err != nil {
			return err
		}
		if oh.Length > maxOptionLength {
			// The data cannot be skipped cheaply and no sane option is this
			// large: say so and hang up.
			sc.optReplyMsg(oh.Option, RepErrTooBig, fmt.Sprintf("option length %d exceeds %d", oh.Length, maxOptionLength))
			return fmt.Errorf("option %s with length %d: too big", optName(oh.Option), oh.Length)
		}
		data := make([]byte, oh.Length)
		if err := sc.c.ReadFull(data); err != nil {
			return err
		}
		if !fixed && oh.Option != OptExportName {
			// Plain newstyle clients may only send EXPORT_NAME.
			return fmt.Errorf("option %s from a client without fixed newstyle", optName(oh.Option))
		}
		done, err := sc.option(oh.Option, data)
		if err != nil || done {
			return err
		}
	}
}

func (sc *serverConn) findExport(name string) *Export {
	exps := sc.srv.Exports
	for i := range exps {
		if exps[i].Name == name {
			return &exps[i]
		}
	}
	if name == "" {
		return &exps[0]
	}
	return nil
}

func (sc *serverConn) transmissionFlags(e *Export) uint16 {
	f := FlagHasFlags | FlagSendFlush | FlagSendFUA | FlagSendTrim | FlagSendWriteZeroes | FlagSendCache
	if e.ReadOnly {
		f |= FlagReadOnly
	}
	if sc.sr {
		f |= FlagSendDF
	}
	if _, ok := e.Backend.(Zeroer); ok {
		// Only a backend with a real zero operation is fast; otherwise
		// FAST_ZERO would have to fail every time.
		f |= FlagSendFastZero
	}
	if BackendCoherent(e.Backend) {
		f |= FlagCanMultiConn
	}
	return f
}

// option handles one option; done reports the start of transmission.
func (sc *serverConn) option(opt uint32, data []byte) (done bool, err error) {
	switch opt {
	case OptExportName:
		e := sc.findExport(string(data))
		if e == nil {
			// EXPORT_NAME has no error reply: the only refusal is to close.
			return false, fmt.Errorf("EXPORT_NAME for unknown export %q", string(data))
		}
		sc.enter(e)
		b := make([]byte, 10+exportNameTail)
		be64(b[0:], uint64(e.Backend.Size()))
		be16(b[8:], sc.tflags)
		if sc.noZeroes {
			b = b[:10]
		}
		_, err := sc.c.Write(b)
		return err == nil, err

	case OptAbort:
		// libnbd and qemu close without reading this ACK; a failed write
		// is expected and not an error.
		sc.optReply(opt, RepAck, nil)
		return false, errAborted

	case OptList:
		if len(data) != 0 {
			return false, sc.optReplyMsg(opt, RepErrInvalid, "LIST takes no data")
		}
		for _, e := range sc.srv.Exports {
			p := make([]byte, 4+len(e.Name)+len(e.Description))
			be32(p, uint32(len(e.Name)))
			copy(p[4:], e.Name)
			copy(p[4+len(e.Name):], e.Description)
			if err := sc.optReply(opt, RepServer, p); err != nil {
				return false, err
			}
		}
		return false, sc.optReply(opt, RepAck, nil)

	case OptStartTLS:
		return false, sc.optReplyMsg(opt, RepErrUnsup, "TLS is not supported by this server")

	case OptInfo, OptGo:
		return sc.infoGo(opt, data)

	case OptStructuredReply:
		if len(data) != 0 {
			return false, sc.optReplyMsg(opt, RepErrInvalid, "STRUCTURED_REPLY takes no data")
		}
		sc.sr = true
		return false, sc.optReply(opt, RepAck, nil)

	case OptListMetaContext, OptSetMetaContext:
		return false, sc.metaContext(opt, data)

	case OptExtendedHeaders:
		return false, sc.optReplyMsg(opt, RepErrUnsup, "extended headers are not supported")
	}
	return false, sc.optReplyMsg(opt, RepErrUnsup, fmt.Sprintf("option %d is not supported", opt))
}

func (sc *serverConn) enter(e *Export) {
	sc.exp = e
	sc.tflags = sc.transmissionFlags(e)
	sc.fastZero = sc.tflags&FlagSendFastZero != 0
	sc.transmits = true
}

func (sc *serverConn) infoGo(opt uint32, data []byte) (bool, error) {
	ir, err := ParseInfoRequest(data)
	if err != nil {
		return false, sc.optReplyMsg(opt, RepErrInvalid, err.Error())
	}
	e := sc.findExport(ir.Name)
	if e == nil {
		return false, sc.optReplyMsg(opt, RepErrUnknown, fmt.Sprintf("export %q not found", ir.Name))
	}
	tflags := sc.transmissionFlags(e)
	for _, it := range ir.Infos {
		var p []byte
		switch it {
		case InfoName:
			p = make([]byte, 2+len(e.Name))
			be16(p, InfoName)
			copy(p[2:], e.Name)
		case InfoDescription:
			if e.Description == "" {
				continue
			}
			p = make([]byte, 2+len(e.Description))
			be16(p, InfoDescription)
			copy(p[2:], e.Description)
		case InfoBlockSize:
			// Minimum 1, preferred 4096, maximum 32 MiB: values qemu
			// accepts (nbd-notes §6.2).
			p = make([]byte, 14)
			be16(p, InfoBlockSize)
			be32(p[2:], defaultBlockMin)
			be32(p[6:], defaultBlockPref)
			be32(p[10:], MaxPayload)
		default:
			continue // unknown or unrequestable info types are ignored
		}
		if err := sc.optReply(opt, RepInfo, p); err != nil {
			return false, err
		}
	}
	p := make([]byte, 12)
	be16(p, InfoExport)
	be64(p[2:], uint64(e.Backend.Size()))
	be16(p[10:], tflags)
	if err := sc.optReply(opt, RepInfo, p); err != nil {
		return false, err
	}
	if err := sc.optReply(opt, RepAck, nil); err != nil {
		return false, err
	}
	if opt == OptGo {
		sc.enter(e)
		return true, nil
	}
	return false, nil
}

func (sc *serverConn) metaContext(opt uint32, data []byte) error {
	mr, err := ParseMetaContextRequest(data)
	if err != nil {
		return sc.optReplyMsg(opt, RepErrInvalid, err.Error())
	}
	if opt == OptSetMetaContext && !sc.sr {
		return sc.optReplyMsg(opt, RepErrInvalid, "SET_META_CONTEXT needs STRUCTURED_REPLY first")
	}
	if sc.findExport(mr.Export) == nil {
		return sc.optReplyMsg(opt, RepErrUnknown, fmt.Sprintf("export %q not found", mr.Export))
	}
	match := false
	if opt == OptListMetaContext && len(mr.Queries) == 0 {
		match = true // an empty list asks for every context we have
	}
	for _, q := range mr.Queries {
		switch q {
		case MetaContextBaseAllocation:
			match = true
		case "base:":
			if opt == OptListMetaContext {
				match = true
			}
		}
		// Unknown namespaces (qemu:, x-…) are ignored, as the spec asks.
	}
	var id uint32
	if opt == OptSetMetaContext {
		sc.metaID = 0
		if match {
			id = 1
			sc.metaID = 1
		}
	}
	if match {
		p := make([]byte, 4+len(MetaContextBaseAllocation))
		be32(p, id)
		copy(p[4:], MetaContextBaseAllocation)
		if err := sc.optReply(opt, RepMetaContext, p); err != nil {
			return err
		}
	}
	return sc.optReply(opt, RepAck, nil)
}

func (sc *serverConn) optReply(opt, typ uint32, data []byte) error {
	b := make([]byte, optReplyHdrSize, optReplyHdrSize+len(data))
	be64(b[0:], magicOptReply)
	be32(b[8:], opt)
	be32(b[12:], typ)
	be32(b[16:], uint32(len(data)))
	b = append(b, data...)
	_, err := sc.c.Write(b)
	return err
}

func (sc *serverConn) optReplyMsg(opt, typ uint32, msg string) error {
	return sc.optReply(opt, typ, []byte(msg))
}
