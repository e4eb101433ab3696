package main

import (
	"net"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// serve takes qemu-nbd's TCP flags too, so that a qemu-nbd command line
// carries over: -p PORT, -b ADDRESS (loopback unless told: NBD has no
// authentication), -t (persistent: accepted, serve always is) and -f raw
// (the one format served; any other is refused rather than served as raw
// bytes).

// qemuFlags are serve's qemu-nbd flags.
type qemuFlags struct {
	port       int
	bind       string
	persistent bool
	format     string
}

// addQemuFlags adds -p, -b, -t and -f.
func addQemuFlags(fs *pflag.FlagSet, q *qemuFlags) {
	fs.IntVarP(&q.port, "port", "p", 10809, "with -b: listen on TCP `PORT` (qemu-nbd's -p)")
	fs.StringVarP(&q.bind, "bind", "b", "127.0.0.1", "with -p: listen on `ADDRESS` (qemu-nbd's -b; beyond loopback it warns: NBD has no authentication)")
	fs.BoolVarP(&q.persistent, "persistent", "t", false, "accepted for qemu-nbd's -t: serve always keeps serving after a client leaves")
	fs.StringVarP(&q.format, "format", "f", "raw", "image `FORMAT`: raw only (qemu-nbd's -f)")
}

// apply turns -p and -b into --listen's address and checks -f.
func (q qemuFlags) apply(fs *pflag.FlagSet, f *serveFlags) error {
	if fs.Changed("format") && !strings.EqualFold(q.format, "raw") {
		return usageErrorf("serve: -f/--format %s: nbdscope serves raw images only; convert with 'qemu-img convert -O raw', or serve it with qemu-nbd", q.format)
	}
	if !fs.Changed("port") && !fs.Changed("bind") {
		return nil
	}
	switch {
	case f.listen != "":
		return usageErrorf("serve: -p/-b and --listen say the same thing twice; use one")
	case f.socket != "":
		return usageErrorf("serve: -p/-b (TCP) and -k (a unix socket) exclude each other")
	case q.port < 0 || q.port > 65535:
		return usageErrorf("serve: -p/--port %d: want 0…65535 (0: any free port)", q.port)
	case q.bind != "localhost" && net.ParseIP(q.bind) == nil:
		return usageErrorf("serve: -b/--bind %q: want an IP address (127.0.0.1, ::1) or localhost", q.bind)
	}
	f.listen = net.JoinHostPort(q.bind, strconv.Itoa(q.port))
	return nil
}
