// Package nbd implements the Network Block Device protocol (fixed newstyle
// handshake, simple and structured replies) as used by qemu-nbd, nbdkit and
// libnbd: a server, a client, NBD URIs and a few backends.
//
// Wire structures and constants live here, apart from the server and client
// loops, so that parsing can be fuzzed on its own.
package nbd

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Magic numbers of the handshake and transmission phases.
const (
	magicNBD         uint64 = 0x4e42444d41474943 // "NBDMAGIC"
	magicIHaveOpt    uint64 = 0x49484156454F5054 // "IHAVEOPT"
	magicOptReply    uint64 = 0x0003e889045565a9
	magicRequest     uint32 = 0x25609513
	magicSimpleReply uint32 = 0x67446698
	magicStructReply uint32 = 0x668e33ef
)

// Handshake flags (server → client, u16).
const (
	flagFixedNewstyle uint16 = 1 << 0
	flagNoZeroes      uint16 = 1 << 1
)

// Client flags (client → server, u32).
const (
	clientFixedNewstyle uint32 = 1 << 0
	clientNoZeroes      uint32 = 1 << 1
)

// Options.
const (
	OptExportName      uint32 = 1
	OptAbort           uint32 = 2
	OptList            uint32 = 3
	OptStartTLS        uint32 = 5
	OptInfo            uint32 = 6
	OptGo              uint32 = 7
	OptStructuredReply uint32 = 8
	OptListMetaContext uint32 = 9
	OptSetMetaContext  uint32 = 10
	OptExtendedHeaders uint32 = 11
)

// Option reply types.
const (
	RepAck         uint32 = 1
	RepServer      uint32 = 2
	RepInfo        uint32 = 3
	RepMetaContext uint32 = 4

	repErrBit           uint32 = 1 << 31
	RepErrUnsup                = repErrBit + 1
	RepErrPolicy               = repErrBit + 2
	RepErrInvalid              = repErrBit + 3
	RepErrPlatform             = repErrBit + 4
	RepErrTLSReqd              = repErrBit + 5
	RepErrUnknown              = repErrBit + 6
	RepErrShutdown             = repErrBit + 7
	RepErrBlockSizeReqd        = repErrBit + 8
	RepErrTooBig               = repErrBit + 9
)

// Info types carried in RepInfo.
const (
	InfoExport      uint16 = 0
	InfoName        uint16 = 1
	InfoDescription uint16 = 2
	InfoBlockSize   uint16 = 3
)

// Transmission flags (u16, sent with the export size).
const (
	FlagHasFlags        uint16 = 1 << 0
	FlagReadOnly        uint16 = 1 << 1
	FlagSendFlush       uint16 = 1 << 2
	FlagSendFUA         uint16 = 1 << 3
	FlagRotational      uint16 = 1 << 4
	FlagSendTrim        uint16 = 1 << 5
	FlagSendWriteZeroes uint16 = 1 << 6
	FlagSendDF          uint16 = 1 << 7
	FlagCanMultiConn    uint16 = 1 << 8
	FlagSendCache       uint16 = 1 << 10
	FlagSendFastZero    uint16 = 1 << 11
)

// Commands.
const (
	CmdRead        uint16 = 0
	CmdWrite       uint16 = 1
	CmdDisc        uint16 = 2
	CmdFlush       uint16 = 3
	CmdTrim        uint16 = 4
	CmdCache       uint16 = 5
	CmdWriteZeroes uint16 = 6
	CmdBlockStatus uint16 = 7
)

// Command flags.
const (
	CmdFlagFUA      uint16 = 1 << 0
	CmdFlagNoHole   uint16 = 1 << 1
	CmdFlagDF       uint16 = 1 << 2
	CmdFlagReqOne   uint16 = 1 << 3
	CmdFlagFastZero uint16 = 1 << 4
)

// Structured reply chunk types and flags.
const (
	ChunkFlagDone uint16 = 1 << 0

	ChunkNone        uint16 = 0
	ChunkOffsetData  uint16 = 1
	ChunkOffsetHole  uint16 = 2
	ChunkBlockStatus uint16 = 5
	ChunkError       uint16 = 0x8001
	ChunkErrorOffset uint16 = 0x8002
)

// Extent flags of base:allocation.
const (
	StateHole uint32 = 1 << 0
	StateZero uint32 = 1 << 1
)

// MetaContextBaseAllocation is the only standard metadata context.
const MetaContextBaseAllocation = "base:allocation"

// Errno values on the wire (the spec fixes them; they are not the host's).
type Errno uint32

const (
	EPERM     Errno = 1
	EIO       Errno = 5
	ENOMEM    Errno = 12
	EINVAL    Errno = 22
	ENOSPC    Errno = 28
	EOVERFLOW Errno = 75
	ENOTSUP   Errno = 95
	ESHUTDOWN Errno = 108
)

func (e Errno) Error() string {
	switch e {
	case EPERM:
		return "nbd: EPERM (operation not permitted)"
	case EIO:
		return "nbd: EIO (input/output error)"
	case ENOMEM:
		return "nbd: ENOMEM (out of memory)"
	case EINVAL:
		return "nbd: EINVAL (invalid argument)"
	case ENOSPC:
		return "nbd: ENOSPC (no space left on device)"
	case EOVERFLOW:
		return "nbd: EOVERFLOW (value too large)"
	case ENOTSUP:
		return "nbd: ENOTSUP (operation not supported)"
	case ESHUTDOWN:
		return "nbd: ESHUTDOWN (server shutting down)"
	}
	return fmt.Sprintf("nbd: errno %d", uint32(e))
}

// Sizes of fixed wire structures.
const (
	requestSize      = 28
	simpleReplySize  = 16
	chunkHeaderSize  = 20
	optHeaderSize    = 16
	optReplyHdrSize  = 20
	exportNameTail   = 124
	greetingSize     = 18
	maxOptionLength  = 64 << 10 // options carry strings of ≤ 4096 B; be generous but bounded
	maxStringLength  = 4096
	MaxPayload       = 32 << 20 // largest READ/WRITE data payload we accept
	defaultBlockMin  = 1
	defaultBlockPref = 4096
)

// Request is one transmission-phase request header.
type Request struct {
	Flags  uint16
	Type   uint16
	Cookie uint64
	Offset uint64
	Length uint32
}

// ParseRequest decodes a 28-byte request header.
func ParseRequest(b []byte) (Request, error) {
	if err := checkHeader(b, requestSize, "request", magicRequest); err != nil {
		return Request{}, err
	}
	return Request{
		Flags:  binary.BigEndian.Uint16(b[4:6]),
		Type:   binary.BigEndian.Uint16(b[6:8]),
		Cookie: binary.BigEndian.Uint64(b[8:16]),
		Offset: binary.BigEndian.Uint64(b[16:24]),
		Length: binary.BigEndian.Uint32(b[24:28]),
	}, nil
}

// checkHeader checks that b holds a whole fixed header of size bytes and
// that it starts with its magic, a 32- or 64-bit number as the header's
// kind has it; what names the header in the errors ("nbd: short request
// header (3 bytes)", "nbd: bad request magic 0x…").
func checkHeader[M uint32 | uint64](b []byte, size int, what string, magic M) error {
	if len(b) < size {
		return fmt.Errorf("nbd: short %s header (%d bytes)", what, len(b))
	}
	var got M
	switch m := any(&got).(type) {
	case *uint32:
		*m = binary.BigEndian.Uint32(b)
	case *uint64:
		*m = binary.BigEndian.Uint64(b)
	}
	if got != magic {
		return fmt.Errorf("nbd: bad %s magic 0x%0*x", what, 2*binary.Size(got), got)
	}
	return nil
}

// Put encodes r into b (len ≥ 28).
func (r Request) Put(b []byte) {
	binary.BigEndian.PutUint32(b[0:4], magicRequest)
	binary.BigEndian.PutUint16(b[4:6], r.Flags)
	binary.BigEndian.PutUint16(b[6:8], r.Type)
	binary.BigEndian.PutUint64(b[8:16], r.Cookie)
	binary.BigEndian.PutUint64(b[16:24], r.Offset)
	binary.BigEndian.PutUint32(b[24:28], r.Length)
}

func putSimpleReply(b []byte, errno Errno, cookie uint64) {
	binary.BigEndian.PutUint32(b[0:4], magicSimpleReply)
	binary.BigEndian.PutUint32(b[4:8], uint32(errno))
	binary.BigEndian.PutUint64(b[8:16], cookie)
}

func putChunkHeader(b []byte, flags, typ uint16, cookie uint64, length uint32) {
	binary.BigEndian.PutUint32(b[0:4], magicStructReply)
	binary.BigEndian.PutUint16(b[4:6], flags)
	binary.BigEndian.PutUint16(b[6:8], typ)
	binary.BigEndian.PutUint64(b[8:16], cookie)
	binary.BigEndian.PutUint32(b[16:20], length)
}

// OptionRequest is a decoded option-haggling request header.
type OptionRequest struct {
	Option uint32
	Length uint32
}

// ParseOptionHeader decodes the 16-byte option request header.
func ParseOptionHeader(b []byte) (OptionRequest, error) {
	if err := checkHeader(b, optHeaderSize, "option", magicIHaveOpt); err != nil {
		return OptionRequest{}, err
	}
	return OptionRequest{
		Option: binary.BigEndian.Uint32(b[8:12]),
		Length: binary.BigEndian.Uint32(b[12:16]),
	}, nil
}

// InfoRequest is the payload of NBD_OPT_INFO and NBD_OPT_GO.
type InfoRequest struct {
	Name  string
	Infos []uint16
}

// ParseInfoRequest decodes the data of an INFO or GO option.
func ParseInfoRequest(data []byte) (InfoRequest, error) {
	name, rest, err := cutString(data, "export name")
	if err != nil {
		return InfoRequest{}, err
	}
	if len(rest) < 2 {
		return InfoRequest{}, errors.New("option data too short for info count")
	}
	cnt := int(binary.BigEndian.Uint16(rest[0:2]))
	rest = rest[2:]
	if len(rest) != 2*cnt {
		return InfoRequest{}, fmt.Errorf("info request count %d does not match %d remaining bytes", cnt, len(rest))
	}
	infos := make([]uint16, cnt)
	for i := range infos {
		infos[i] = binary.BigEndian.Uint16(rest[2*i:])
	}
	return InfoRequest{Name: name, Infos: infos}, nil
}

// MetaContextRequest is the payload of LIST_ and SET_META_CONTEXT.
type MetaContextRequest struct {
	Export  string
	Queries []string
}

// ParseMetaContextRequest decodes LIST_META_CONTEXT / SET_META_CONTEXT data.
func ParseMetaContextRequest(data []byte) (MetaContextRequest, error) {
	var r MetaContextRequest
	var rest []byte
	var err error
	if r.Export, rest, err = cutString(data, "export name"); err != nil {
		return r, err
	}
	if len(rest) < 4 {
		return r, errors.New("option data too short for query count")
	}
	cnt := binary.BigEndian.Uint32(rest[0:4])
	rest = rest[4:]
	if uint64(cnt)*4 > uint64(len(rest)) {
		return r, fmt.Errorf("query count %d exceeds option data", cnt)
	}
	for i := uint32(0); i < cnt; i++ {
		var q string
		if q, rest, err = cutString(rest, "query"); err != nil {
			return r, err
		}
		r.Queries = append(r.Queries, q)
	}
	if len(rest) != 0 {
		return r, fmt.Errorf("%d trailing bytes after queries", len(rest))
	}
	return r, nil
}

// cutString reads a string that option data carries behind its 32-bit
// length (an export name, a query) and returns it with the data after it;
// what names the string in errors. Strings are at most maxStringLength.
func cutString(data []byte, what string) (s string, rest []byte, err error) {
	if len(data) < 4 {
		return "", nil, fmt.Errorf("option data too short for %s length", what)
	}
	n := binary.BigEndian.Uint32(data[0:4])
	if uint64(n) > uint64(len(data)-4) || n > maxStringLength {
		return "", nil, fmt.Errorf("%s length %d exceeds option data", what, n)
	}
	return string(data[4 : 4+n]), data[4+n:], nil
}

// Chunk is a decoded structured reply chunk header.
type Chunk struct {
	Flags  uint16
	Type   uint16
	Cookie uint64
	Length uint32
}

// ParseChunkHeader decodes a 20-byte structured reply chunk header.
func ParseChunkHeader(b []byte) (Chunk, error) {
	if err := checkHeader(b, chunkHeaderSize, "structured reply chunk", magicStructReply); err != nil {
		return Chunk{}, err
	}
	return Chunk{
		Flags:  binary.BigEndian.Uint16(b[4:6]),
		Type:   binary.BigEndian.Uint16(b[6:8]),
		Cookie: binary.BigEndian.Uint64(b[8:16]),
		Length: binary.BigEndian.Uint32(b[16:20]),
	}, nil
}

// ErrorChunk is the payload of an ERROR or ERROR_OFFSET chunk.
type ErrorChunk struct {
	Errno     Errno
	Message   string
	Offset    uint64
	HasOffset bool
}

// ParseErrorChunk decodes the payload of an error chunk of type typ.
func ParseErrorChunk(typ uint16, p []byte) (ErrorChunk, error) {
	if len(p) < 6 {
		return ErrorChunk{}, fmt.Errorf("nbd: error chunk too short (%d bytes)", len(p))
	}
	e := ErrorChunk{Errno: Errno(binary.BigEndian.Uint32(p[0:4]))}
	ml := int(binary.BigEndian.Uint16(p[4:6]))
	if 6+ml > len(p) {
		return e, fmt.Errorf("nbd: error chunk message length %d overruns chunk of %d bytes", ml, len(p))
	}
	e.Message = string(p[6 : 6+ml])
	rest := p[6+ml:]
	switch typ {
	case ChunkErrorOffset:
		if len(rest) != 8 {
			return e, fmt.Errorf("nbd: ERROR_OFFSET chunk has %d bytes after message, want 8", len(rest))
		}
		e.Offset = binary.BigEndian.Uint64(rest)
		e.HasOffset = true
	default:
		if len(rest) != 0 {
			return e, fmt.Errorf("nbd: error chunk has %d trailing bytes", len(rest))
		}
	}
	if e.Errno == 0 {
		// The spec forbids errno 0 in an error chunk; treat it as EIO
		// rather than as success.
		e.Errno = EIO
	}
	return e, nil
}

// ParseBlockStatus decodes a BLOCK_STATUS chunk payload.
func ParseBlockStatus(p []byte) (contextID uint32, extents []Extent, err error) {
	if len(p) < 4 || (len(p)-4)%8 != 0 {
		return 0, nil, fmt.Errorf("nbd: BLOCK_STATUS chunk of %d bytes is malformed", len(p))
	}
	contextID = binary.BigEndian.Uint32(p[0:4])
	for q := p[4:]; len(q) >= 8; q = q[8:] {
		extents = append(extents, Extent{
			Length: uint64(binary.BigEndian.Uint32(q[0:4])),
			Flags:  binary.BigEndian.Uint32(q[4:8]),
		})
	}
	if len(extents) == 0 {
		return 0, nil, errors.New("nbd: BLOCK_STATUS chunk without extents")
	}
	return contextID, extents, nil
}

// ProtocolError reports a peer that broke the protocol.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "nbd: protocol error: " + e.Msg }

func protoErrorf(format string, a ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, a...)}
}

// OptionError is an error reply to an option (bit 31 set).
type OptionError struct {
	Option  uint32
	Type    uint32
	Message string
}

func (e *OptionError) Error() string {
	msg := ""
	if e.Message != "" {
		msg = ": " + e.Message
	}
	return fmt.Sprintf("nbd: server replied %s to option %s%s", repName(e.Type), optName(e.Option), msg)
}

func repName(t uint32) string {
	switch t {
	case RepErrUnsup:
		return "ERR_UNSUP"
	case RepErrPolicy:
		return "ERR_POLICY"
	case RepErrInvalid:
		return "ERR_INVALID"
	case RepErrPlatform:
		return "ERR_PLATFORM"
	case RepErrTLSReqd:
		return "ERR_TLS_REQD"
	case RepErrUnknown:
		return "ERR_UNKNOWN"
	case RepErrShutdown:
		return "ERR_SHUTDOWN"
	case RepErrBlockSizeReqd:
		return "ERR_BLOCK_SIZE_REQD"
	case RepErrTooBig:
		return "ERR_TOO_BIG"
	}
	return fmt.Sprintf("reply type 0x%x", t)
}

func optName(o uint32) string {
	switch o {
	case OptExportName:
		return "EXPORT_NAME"
	case OptAbort:
		return "ABORT"
	case OptList:
		return "LIST"
	case OptStartTLS:
		return "STARTTLS"
	case OptInfo:
		return "INFO"
	case OptGo:
		return "GO"
	case OptStructuredReply:
		return "STRUCTURED_REPLY"
	case OptListMetaContext:
		return "LIST_META_CONTEXT"
	case OptSetMetaContext:
		return "SET_META_CONTEXT"
	case OptExtendedHeaders:
		return "EXTENDED_HEADERS"
	}
	return fmt.Sprintf("option %d", o)
}

// CmdName names a command for errors and logs.
func CmdName(c uint16) string {
	switch c {
	case CmdRead:
		return "READ"
	case CmdWrite:
		return "WRITE"
	case CmdDisc:
		return "DISC"
	case CmdFlush:
		return "FLUSH"
	case CmdTrim:
		return "TRIM"
	case CmdCache:
		return "CACHE"
	case CmdWriteZeroes:
		return "WRITE_ZEROES"
	case CmdBlockStatus:
		return "BLOCK_STATUS"
	}
	return fmt.Sprintf("command %d", c)
}
