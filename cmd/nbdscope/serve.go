package main

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/platform"
	"nbdscope/units"
)

const serveLong = `A standalone NBD server, in the spirit of qemu-nbd, that real clients
(qemu-img, qemu-io, nbdinfo, nbdcopy, fio) can use. The short flags are
qemu-nbd's: -k socket, -x export name, -r read-only, -e shared connections,
-v verbose, -p port and -b address (TCP; loopback unless -b says
otherwise), -t persistent (accepted: serve always is), -f raw. SIGINT,
SIGTERM or SIGHUP is the normal way to stop it and, as with qemu-nbd and
nbdkit, exits 0, its socket removed.`

const serveExample = `  nbdscope serve -k /tmp/nbd.sock --backend memory --size 1g
  nbdscope serve --listen 127.0.0.1:10809 --backend null --size 4g --sndbuf 2m
  nbdscope serve -k /tmp/disk.sock --backend file:disk.img -r
  nbdscope serve -k /tmp/nbd.sock --backend null --size 4g --sndbuf 2m --stats --stats-json stats.json`

type serveFlags struct {
	socket, listen, export, desc, backend, size, sndbuf, fill string
	readOnly, verbose                                         bool
	maxConns                                                  int
	stats, statsJSON                                          string
	qemu                                                      qemuFlags // -p, -b, -t, -f (serve_qemu.go)
	statsSet                                                  bool      // --stats given (perhaps as --stats=)
}

// serveArgs refuses arguments; one after --stats is its interval typed
// with a space, which an optional value cannot take: say what to type.
func serveArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && cmd.Flags().Changed("stats") {
		if _, err := time.ParseDuration(args[0]); err == nil {
			return usageErrorf("%s: unexpected argument %q: the --stats interval follows '=': --stats=%s", cmd.CommandPath(), args[0], args[0])
		}
	}
	return noArgs(cmd, args)
}

func newServeCmd(a *app) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:     "serve [flags]",
		Short:   "Serve an export to real NBD clients (qemu-nbd's flags)",
		Long:    serveLong,
		Example: serveExample,
		Args:    serveArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.statsSet = cmd.Flags().Changed("stats")
			if err := f.qemu.apply(cmd.Flags(), &f); err != nil {
				return err
			}
			return a.serve(f)
		},
	}
	setExits(cmd, exitsServe)
	fs := cmd.Flags()
	fs.StringVarP(&f.socket, "socket", "k", "", "serve on the unix socket `PATH` (created 0600)")
	fs.StringVar(&f.listen, "listen", "", "serve on TCP `HOST:PORT` (default 127.0.0.1:10809)")
	fs.StringVarP(&f.export, "export", "x", "", "export `NAME` (the empty name also reaches the export); qemu-nbd's --export-name")
	fs.StringVarP(&f.desc, "description", "D", "", "export `TEXT` shown by nbdinfo and qemu-nbd -L")
	fs.StringVar(&f.backend, "backend", "memory", "`BACKEND`: null, pattern, memory or file:PATH")
	fs.StringVar(&f.size, "size", "", "export `SIZE` (512k, 2m, 10g; a multiple of 512); when not given 1g, or for file: the file's size (also 0)")
	fs.BoolVarP(&f.readOnly, "read-only", "r", false, "refuse writes, trims and zeroes with EPERM")
	fs.StringVar(&f.sndbuf, "sndbuf", "default", "SO_SNDBUF of each accepted connection: default or a `SIZE`")
	fs.StringVar(&f.fill, "fill", "0xff", "`BYTE` that null backend reads return")
	fs.IntVarP(&f.maxConns, "max-connections", "e", nbd.DefaultMaxConns, "refuse connections beyond `N` (qemu-nbd's -e/--shared)")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "log connections and protocol errors to stderr")
	fs.StringVar(&f.stats, "stats", "", "every `INTERVAL` (--stats alone: 1s; --stats=500ms) a line per connection and in total on stderr; a summary table at exit and on SIGUSR1")
	fs.Lookup("stats").NoOptDefVal = "1s"
	fs.StringVar(&f.statsJSON, "stats-json", "", "with --stats: write the summary as JSON to `FILE` (at exit and on SIGUSR1)")
	addQemuFlags(fs, &f.qemu)
	cmd.RegisterFlagCompletionFunc("backend", completeFixed(fixed("null", "pattern", "memory", "file:")))
	cmd.RegisterFlagCompletionFunc("sndbuf", completeFixed(func() []string { return model.BufLadder }))
	return cmd
}

// serve runs an NBD server until SIGINT, SIGTERM or SIGHUP: it checks the flags,
// opens the backend, listens, sets the send buffer and says what it got;
// with --stats it reports the connections' figures as it serves.
func (a *app) serve(f serveFlags) error {
	stderr := a.stderr
	size, fill, sndbuf, err := f.parse()
	if err != nil {
		return err
	}
	interval, err := statsInterval(f)
	if err != nil {
		return err
	}
	if path, ok := strings.CutPrefix(f.backend, "file:"); ok {
		if err := nbd.CheckImage(path); err != nil {
			return usageErrorf("serve: --backend: %v", err)
		}
	}
	be, err := nbd.OpenBackend(f.backend, size, nbd.BackendOptions{Fill: fill, ReadOnly: f.readOnly})
	if err != nil {
		return err
	}
	if c, ok := be.(nbd.Closer); ok {
		defer c.Close()
	}
	readOnly := f.readOnly || f.backend == "pattern"
	srv := &nbd.Server{
		Exports:  []nbd.Export{{Name: f.export, Description: f.desc, Backend: be, ReadOnly: readOnly}},
		MaxConns: f.maxConns,
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "nbdscope serve: "+format+"\n", a...) }
	// Refusals at --max-connections are said without -v (at most a line
	// a second): a client turned away must not be a mystery.
	srv.Warnf = logf
	if f.verbose {
		srv.Logf = logf
	}
	ln, uri, err := f.openListener(stderr)
	if err != nil {
		return err
	}
	def, eff, err := serveSndbuf(srv, uri.Transport, sndbuf)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(stderr, "nbdscope serve: %s backend, %s, %s\n", f.backend, units.FormatSize(be.Size()), map[bool]string{true: "read-only", false: "writable"}[readOnly])
	if sndbuf > 0 {
		fmt.Fprintf(stderr, "nbdscope serve: SO_SNDBUF requested %s, effective %s (OS default %s)%s\n",
			units.FormatSize(int64(sndbuf)), units.FormatSize(int64(eff)), units.FormatSize(int64(def)), sndbufNote(sndbuf, eff))
	} else {
		fmt.Fprintf(stderr, "nbdscope serve: SO_SNDBUF OS default, effective %s\n", units.FormatSize(int64(def)))
	}
	// The signals are caught before the line that says the server is up:
	// a script that stops it on seeing that line gets exit 0, not a
	// death by signal.
	ctx, stop := signalContext()
	defer stop()
	fmt.Fprintf(stderr, "nbdscope serve: listening on %s\n", uri)
	if interval > 0 {
		return serveWithStats(ctx, srv, ln, interval, f.statsJSON, stderr)
	}
	return srv.Serve(ctx, ln)
}

// defaultServeSize is the export's size when --size is not given (and the
// backend is not a file, which has its own).
const defaultServeSize = 1 << 30

// parse checks the flags and parses the size, fill byte and send buffer
// (0: the OS default).
func (f serveFlags) parse() (size int64, fill byte, sndbuf int, err error) {
	if f.socket != "" && f.listen != "" {
		return 0, 0, 0, usageErrorf("serve: --socket and --listen exclude each other")
	}
	if err := nbd.CheckBackendSpec(f.backend); err != nil {
		return 0, 0, 0, usageErrorf("serve: --backend: %v", err)
	}
	switch {
	case f.size == "" && strings.HasPrefix(f.backend, "file:"):
		// An image has its size: asking for another one is refused (it
		// is never resized), so not asking means the file's.
	case f.size == "":
		size = defaultServeSize
	case f.size != "0":
		if size, err = units.ParseSize(f.size); err != nil {
			return 0, 0, 0, usageErrorf("serve: --size: %v", err)
		}
		if size <= 0 || size%512 != 0 {
			// Clients such as qemu round the size up and then fail on the tail.
			return 0, 0, 0, usageErrorf("serve: --size %s: want a positive multiple of 512 (512, 1m, 10g)", f.size)
		}
	}
	if fill, err = parseByte(f.fill); err != nil {
		return 0, 0, 0, usageErrorf("serve: --fill: %v", err)
	}
	if f.sndbuf != "default" && f.sndbuf != "" {
		n, err := units.ParseSize(f.sndbuf)
		if err != nil || n <= 0 || n > 1<<30 {
			return 0, 0, 0, usageErrorf("serve: --sndbuf %q: want default or a size up to 1g", f.sndbuf)
		}
		sndbuf = int(n)
	}
	if f.maxConns < 1 {
		return 0, 0, 0, usageErrorf("serve: --max-connections must be at least 1")
	}
	return size, fill, sndbuf, nil
}

// openListener opens the unix socket (--socket) or the TCP address (--listen,
// loopback port 10809 by default; a warning beyond loopback) and returns
// the URI that reaches it.
func (f serveFlags) openListener(stderr io.Writer) (net.Listener, nbd.URI, error) {
	if f.socket != "" {
		ul, err := nbd.ListenUnix(f.socket)
		if err != nil {
			return nil, nbd.URI{}, fmt.Errorf("serve: %w", err)
		}
		return ul, nbd.URI{Transport: "unix", Socket: f.socket, Export: f.export}, nil
	}
	addr := f.listen
	if addr == "" {
		addr = "127.0.0.1:10809"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nbd.URI{}, usageErrorf("serve: --listen %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintf(stderr, "nbdscope serve: warning: listening on %s, beyond this machine; NBD has no authentication or encryption, anyone who can reach it can read and write the export\n", addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil { // a number (0…65535) or a service name
		return nil, nbd.URI{}, usageErrorf("serve: --listen %q: %v", addr, err)
	}
	tl, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nbd.URI{}, fmt.Errorf("serve: %w", err)
	}
	p, _ := strconv.Atoi(port)
	if a, ok := tl.Addr().(*net.TCPAddr); ok {
		p = a.Port
	}
	return tl, nbd.URI{Transport: "tcp", Host: host, Port: p, Export: f.export}, nil
}

// serveSndbuf sets the send buffer of the connections srv accepts on
// network (0: leave the OS default) and probes the OS default and what a
// socket gets.
func serveSndbuf(srv *nbd.Server, network string, sndbuf int) (def, eff int, err error) {
	if c, refused := platform.NativeLimit().Refuses(nbd.SendBuf, sndbuf); refused {
		return 0, 0, fmt.Errorf("serve: --sndbuf %s", c) // macOS: ENOBUFS above the limit; says the fix
	}
	if sndbuf > 0 {
		if _, err := srv.SetSocketBuffer(nbd.SendBuf, sndbuf); err != nil {
			return 0, 0, err
		}
	}
	return nbd.ProbeSocketBuffer(network, nbd.SendBuf, sndbuf)
}

// sndbufNote explains an effective value that differs from the request.
func sndbufNote(req, eff int) string {
	switch {
	case eff == 2*req:
		return " — Linux doubles every request for its bookkeeping"
	case eff < req:
		return " — clamped by the kernel limit; see 'nbdscope doctor'"
	case eff != req:
		return " — clamped by the kernel limit; see 'nbdscope doctor'"
	}
	return ""
}

func parseByte(s string) (byte, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 0, 8)
	if err != nil {
		return 0, fmt.Errorf("%q is not a byte value (0-255, 0xNN)", s)
	}
	return byte(v), nil
}
