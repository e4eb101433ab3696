package nbd

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"strings"
)

// DefaultPort is the IANA port of NBD, used when a URI names none.
const DefaultPort = 10809

// URI is a parsed NBD URI (NetworkBlockDevice/nbd doc/uri.md):
//
//	nbd://host[:port][/export]            Transport "tcp"
//	nbd+unix:///[export]?socket=PATH      Transport "unix"
//
// The export name is the path minus its leading "/", percent-decoded:
// "nbd://h/" and "nbd://h" name "", "nbd://h//disk" names "/disk".
//
// Not supported, each with a clear error: TLS (nbds, nbds+unix, tls-*
// parameters, userinfo, which only carries a TLS user name), vsock, unknown
// query parameters (including x-*), fragments, the legacy qemu form
// "nbd:host:port". "nbd+tcp://" is accepted as qemu does and printed as
// "nbd://". An abstract Unix socket ("socket=%00name") is accepted on Linux
// only; Address then returns "@name", Go's spelling of it.
type URI struct {
	Transport string // "tcp" or "unix"
	Host      string // tcp: host name or IP address (IPv6 without brackets, zone after "%")
	Port      int    // tcp: port, DefaultPort if the URI names none
	Socket    string // unix: socket path; a leading NUL byte means an abstract socket (Linux)
	Export    string // export name, decoded
}

// ParseURI parses an NBD URI.
func ParseURI(s string) (URI, error) {
	bad := func(err error) (URI, error) {
		return URI{}, fmt.Errorf("invalid NBD URI %q: %w", s, err)
	}
	var u URI
	scheme, err := uriScheme(s, &u)
	if err != nil {
		return bad(err)
	}
	if strings.ContainsRune(s, '#') {
		return bad(errors.New("fragments (#…) are not allowed; write # in an export name as %23"))
	}
	pu, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return bad(err)
	}
	if pu.Opaque != "" {
		return bad(fmt.Errorf("the form %s:%s is not supported; write %s://HOST:PORT/EXPORT", scheme, pu.Opaque, scheme))
	}
	if pu.User != nil {
		return bad(fmt.Errorf("user info (%q@) is only used for TLS, which is not supported", pu.User.String()))
	}
	if err := uriExport(pu.Path, &u); err != nil {
		return bad(err)
	}
	socketSeen, err := uriQuery(pu.RawQuery, &u)
	if err != nil {
		return bad(err)
	}
	if u.Transport == "unix" {
		if pu.Host != "" {
			return bad(fmt.Errorf("nbd+unix:// takes no host or port (got %q); write nbd+unix:///EXPORT?socket=PATH", pu.Host))
		}
		if err := uriCheckSocket(u.Socket, socketSeen); err != nil {
			return bad(err)
		}
		return u, nil
	}
	if err := uriHostPort(pu, &u); err != nil {
		return bad(err)
	}
	return u, nil
}

// uriScheme sets u's transport from s's scheme, which it returns.
func uriScheme(s string, u *URI) (string, error) {
	scheme, _, hasColon := strings.Cut(s, ":")
	if !hasColon || scheme == "" || strings.ContainsAny(scheme, "/[]@?#") {
		return "", errors.New("no scheme: want nbd://HOST[:PORT]/EXPORT or nbd+unix:///EXPORT?socket=PATH")
	}
	switch strings.ToLower(scheme) {
	case "nbd", "nbd+tcp":
		u.Transport = "tcp"
	case "nbd+unix":
		u.Transport = "unix"
	case "nbds", "nbds+unix", "nbds+tcp", "nbds+vsock":
		return "", fmt.Errorf("scheme %q needs TLS, which is not supported; use nbd:// or nbd+unix://", scheme)
	case "nbd+vsock":
		return "", errors.New("the vsock transport (nbd+vsock) is not supported; use nbd:// or nbd+unix://")
	default:
		return "", fmt.Errorf("unknown scheme %q: want nbd:// or nbd+unix://", scheme)
	}
	return scheme, nil
}

// uriExport sets u's export name from the URI's (decoded) path.
func uriExport(path string, u *URI) error {
	u.Export = strings.TrimPrefix(path, "/")
	if len(u.Export) > maxStringLength {
		return fmt.Errorf("export name is %d bytes, longer than the NBD limit of %d", len(u.Export), maxStringLength)
	}
	if strings.IndexByte(u.Export, 0) >= 0 {
		return errors.New("export name contains a NUL byte")
	}
	return nil
}

// uriQuery takes the query's parameters into u (only socket= is known)
// and reports whether it named a socket.
func uriQuery(raw string, u *URI) (socketSeen bool, err error) {
	for _, kv := range strings.Split(raw, "&") {
		if kv == "" {
			continue
		}
		rk, rv, _ := strings.Cut(kv, "=")
		key, err := url.PathUnescape(rk)
		if err != nil {
			return false, fmt.Errorf("query parameter %q: %v", rk, err)
		}
		val, err := url.PathUnescape(rv) // RFC 3986: "+" is a plus, not a space
		if err != nil {
			return false, fmt.Errorf("query parameter %q: %v", key, err)
		}
		switch {
		case key == "socket":
			if u.Transport != "unix" {
				return false, errors.New("query parameter \"socket\" is only valid with nbd+unix://")
			}
			if socketSeen {
				return false, errors.New("query parameter \"socket\" given twice")
			}
			socketSeen = true
			u.Socket = val
		case strings.HasPrefix(key, "tls-"):
			return false, fmt.Errorf("query parameter %q is for TLS, which is not supported", key)
		default:
			return false, fmt.Errorf("unknown query parameter %q (only \"socket\", for nbd+unix://, is supported)", key)
		}
	}
	return socketSeen, nil
}

// uriHostPort sets a TCP URI's host and port (DefaultPort if none).
func uriHostPort(pu *url.URL, u *URI) error {
	u.Host = pu.Hostname()
	if err := uriCheckHost(u.Host, strings.HasPrefix(pu.Host, "[")); err != nil {
		return err
	}
	u.Port = DefaultPort
	if p := pu.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q is not a number from 1 to 65535", p)
		}
		u.Port = n
	}
	return nil
}

func uriCheckSocket(sock string, seen bool) error {
	switch {
	case !seen:
		return errors.New("nbd+unix:// needs the socket path: ?socket=PATH")
	case sock == "":
		return errors.New("the socket path (socket=) is empty")
	case sock[0] == 0:
		if runtime.GOOS != "linux" {
			return fmt.Errorf("abstract Unix sockets (socket=%%00…) exist only on Linux, not on %s", runtime.GOOS)
		}
		if len(sock) == 1 {
			return errors.New("the abstract socket name (socket=%00…) is empty")
		}
		if strings.IndexByte(sock[1:], 0) >= 0 {
			return errors.New("the socket path contains a NUL byte after the start")
		}
	case strings.IndexByte(sock, 0) >= 0:
		return errors.New("the socket path contains a NUL byte (only a leading %00, for an abstract socket on Linux, is allowed)")
	}
	return nil
}

func uriCheckHost(h string, bracketed bool) error {
	if h == "" {
		return errors.New("no host: write nbd://HOST[:PORT]/EXPORT (nbd+unix:///EXPORT?socket=PATH for a Unix socket)")
	}
	if bracketed {
		addr, zone, hasZone := strings.Cut(h, "%")
		if net.ParseIP(addr) == nil {
			return fmt.Errorf("%q in brackets is not an IP address", h)
		}
		if hasZone && (zone == "" || !uriAllowed(zone, uriUnreserved)) {
			return fmt.Errorf("bad IPv6 zone %q", zone)
		}
		return nil
	}
	if !uriAllowed(h, "-._") {
		return fmt.Errorf("bad host name %q (IPv6 addresses go in brackets: nbd://[::1]/)", h)
	}
	return nil
}

const uriUnreserved = "-._~"

// uriAllowed reports whether s holds only ASCII letters, digits and bytes of
// extra.
func uriAllowed(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		if !uriSafeByte(s[i], extra) {
			return false
		}
	}
	return true
}

func uriSafeByte(c byte, extra string) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte(extra, c) >= 0
}

// Bytes left readable in paths and in the socket= value; everything else is
// percent-encoded. The query set leaves out "&", "=", "+" (a space to form
// decoders), "?" and "#".
const (
	uriPathSafe  = uriUnreserved + "/:@!$&'()*+,;="
	uriQuerySafe = uriUnreserved + "/:@!$'()*,;"
)

func uriEscape(s, safe string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if uriSafeByte(c, safe) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// String formats u as a URI that ParseURI reads back to u: the export name
// and socket path are percent-encoded ("/" stays readable), the port is left
// out when it is DefaultPort.
func (u URI) String() string {
	if u.Transport == "unix" {
		return "nbd+unix:///" + uriEscape(u.Export, uriPathSafe) + "?socket=" + uriEscape(u.Socket, uriQuerySafe)
	}
	var b strings.Builder
	b.WriteString("nbd://")
	if strings.Contains(u.Host, ":") {
		addr, zone, hasZone := strings.Cut(u.Host, "%")
		b.WriteString("[" + addr)
		if hasZone {
			b.WriteString("%25" + uriEscape(zone, uriUnreserved))
		}
		b.WriteString("]")
	} else {
		b.WriteString(uriEscape(u.Host, uriUnreserved))
	}
	if u.Port != 0 && u.Port != DefaultPort {
		b.WriteString(":" + strconv.Itoa(u.Port))
	}
	b.WriteString("/" + uriEscape(u.Export, uriPathSafe))
	return b.String()
}

// Network returns the network for net.Dial: "unix" or "tcp".
func (u URI) Network() string {
	if u.Transport == "unix" {
		return "unix"
	}
	return "tcp"
}

// Address returns the address for net.Dial: "host:port" ("[::1]:10809" for
// IPv6) or the socket path. An abstract socket is returned as "@name", as
// Go's net package spells it; a path that really starts with "@" is
// returned as "./@…" so that Go does not take it for an abstract name.
func (u URI) Address() string {
	if u.Transport == "unix" {
		switch {
		case strings.HasPrefix(u.Socket, "\x00"):
			return "@" + u.Socket[1:]
		case strings.HasPrefix(u.Socket, "@"):
			return "./" + u.Socket
		}
		return u.Socket
	}
	port := u.Port
	if port == 0 {
		port = DefaultPort
	}
	return net.JoinHostPort(u.Host, strconv.Itoa(port))
}
