package presets

import (
	"strings"

	"nbdscope/model"
)

// The built-in presets reproduce the cases the qemu change (a 2 MiB send
// buffer on NBD unix sockets) was measured with. Every side starts from
// model.DefaultSide: a spawned null server on a unix socket, read like
// qemu-img convert (1 connection, 2 MiB requests, 8 in flight, a zero scan
// of each buffer). Each preset consumes the data the way the client it
// models does, since that decides how fast the socket is drained. Duration
// is 0 (until stopped); `run` supplies its own default.

func sizeBuf(n int) model.Buf { return model.Buf{Kind: model.BufSize, Bytes: n} }

var (
	bufDefault = model.Buf{Kind: model.BufDefault}
	bufMacOS   = model.Buf{Kind: model.BufMacOS}
	buf2M      = sizeBuf(2 << 20)
)

// shape sets the load shape of both sides and what they do with the data.
func shape(c *model.Config, conns, reqSize, inFlight int, consume model.ConsumeMode) {
	for i := range c.Sides {
		c.Sides[i].Connections = conns
		c.Sides[i].RequestSize = reqSize
		c.Sides[i].InFlight = inFlight
		c.Sides[i].Consume = consume
	}
}

// writePair is the default pair writing, like qemu-img convert to
// qemu-nbd: both servers at the OS default send buffer (writes hardly use
// it), into a null backend.
func writePair() model.Config {
	c := model.DefaultConfig()
	for i := range c.Sides {
		c.Sides[i].Workload = model.WorkWrite
		c.Sides[i].SndBuf = bufDefault
		c.Sides[i].Backend = "null"
	}
	return c
}

// builtins is the built-in presets, the table of them; each preset's
// configuration is built fresh by the helpers below it.
func builtins() []Preset {
	ps := []Preset{{
		// linux-gap is the default configuration itself.
		Name:        "linux-gap",
		Description: "qemu-img convert style reads (1 connection, 2 MiB, 8 in flight, zero scan): OS default vs 2 MiB server send buffer",
		Demonstrates: "The default: Linux's 208 KiB unix-socket send buffer makes the client need about 10 recvmsg calls " +
			"per 2 MiB read; a 2 MiB SO_SNDBUF cuts that to about one and raised qemu-img's throughput 2.7x. " +
			"Needs net.core.wmem_max >= 2 MiB to take full effect (nbdscope doctor explains).",
		Config: model.DefaultConfig(),
	}, {
		Name:        "macos-gap",
		Description: "qemu-img convert style reads (zero scan): macOS default (8 KiB effective) vs 2 MiB server send buffer",
		Demonstrates: "macOS gives unix sockets an 8 KiB send buffer, so the client needs about 256 reads per " +
			"2 MiB; a 2 MiB SO_SNDBUF made qemu-img up to 12.6x faster there. Reproduces the 8 KiB case on any OS.",
		Config: macosGap(),
	}, {
		Name:        "nbdcopy",
		Description: "nbdcopy --blkhash style reads (4 connections, 256 KiB, 64 in flight, hashed): OS default vs 2 MiB",
		Demonstrates: "Many connections and many small requests in flight keep the socket full, and hashing keeps " +
			"the client busy, so the buffer matters less than for qemu-img (the seed measured 1.19x on Linux) " +
			"but still changes syscalls per 2 MiB and CPU per GiB.",
		Config: shaped(4, 256<<10, 64, model.ConsumeHash),
	}, {
		Name:        "blksum",
		Description: "blksum style reads (1 connection, 256 KiB, 16 in flight, hashed): OS default vs 2 MiB",
		Demonstrates: "One connection with 256 KiB requests, each hashed like blkhash: each reply fits a larger " +
			"buffer in one go, so the gap shows as fewer receive calls and less system time next to the hash's user time " +
			"(the seed measured 2.65x on Linux).",
		Config: shaped(1, 256<<10, 16, model.ConsumeHash),
	}, {
		Name:        "write",
		Description: "qemu-img writing to qemu-nbd (1 connection, 2 MiB, 8 in flight): client send buffer OS default vs 2 MiB",
		Demonstrates: "For writes the client sends the bulk data, so its send buffer is the one that matters: " +
			"it shows in the client's send calls and send EAGAIN per 2 MiB (the server, a sink, drains whatever arrives). " +
			"The seed's Linux write table: 2.67x at 1 MiB. The buffer keys (+ - =) and g act on the client's buffer here.",
		Config: writeClientBuf(),
	}, {
		Name:        "macos-write",
		Description: "qemu-img style writes: macOS default client send buffer (8 KiB effective) vs 2 MiB",
		Demonstrates: "The seed's macOS write table (9.2x): with an 8 KiB send buffer the client sends each 2 MiB " +
			"request in hundreds of calls, most of them after an EAGAIN wait; at 2 MiB in about one. Reproduces the 8 KiB case on any OS.",
		Config: macosWrite(),
	}, {
		Name:        "tcp-vs-unix",
		Description: "qemu-img style reads over a unix socket vs TCP loopback, both at OS default buffers",
		Demonstrates: "The original puzzle: with default buffers NBD over a unix socket is slower than TCP on " +
			"the same machine, because TCP's send buffer grows with demand (autotuning) while a unix socket's stays at its default.",
		Config: tcpVsUnix(),
	}, {
		Name:        "cores",
		Description: "qemu-img style reads at the OS default send buffer: A's server and client on two cores, B's on one",
		Demonstrates: "What a small send buffer really costs: a sleep and a cross-core wake-up each time it fills. " +
			"On two cores (A) that shows; on one core (B) the hand-over is a context switch and the buffer hardly matters. Press o to move a side.",
		Config: splitVsShared(),
	}, {
		Name:        "sweep",
		Description: "server send-buffer sweep of qemu-img style reads: default, 64k … 4m, 4 GiB per point, 3 repeats",
		Demonstrates: "Where the gain comes from and where it stops: throughput and syscalls per 2 MiB " +
			"as the send buffer grows (nbdscope sweep --preset sweep).",
		Config: model.DefaultConfig(),
		Sweep:  &SweepSpec{Sizes: sweepSizes(), Bytes: 4 << 30, Repeat: 3, Setting: model.SetSndBuf},
	}}
	ps = append(ps, execBuiltins()...) // builtin_exec.go: real clients
	ps = append(ps, realBuiltins()...) // builtin_real.go: real servers
	for i := range ps {
		ps[i].BuiltIn = true
	}
	return ps
}

// macosGap: A at macOS's default send buffer (8 KiB), B at 2 MiB.
func macosGap() model.Config {
	c := model.DefaultConfig()
	c.Sides[0].SndBuf = bufMacOS
	return c
}

// shaped is the default pair with both sides' load shape and consume mode.
func shaped(conns, reqSize, inFlight int, consume model.ConsumeMode) model.Config {
	c := model.DefaultConfig()
	shape(&c, conns, reqSize, inFlight, consume)
	return c
}

// writeClientBuf is the write pair with B's client send buffer at 2 MiB.
func writeClientBuf() model.Config {
	c := writePair()
	c.Sides[1].ClientSndBuf = buf2M
	return c
}

// macosWrite is the write pair with A's client send buffer at macOS's
// default (8 KiB) and B's at 2 MiB.
func macosWrite() model.Config {
	c := writeClientBuf()
	c.Sides[0].ClientSndBuf = bufMacOS
	return c
}

// tcpVsUnix: A over a unix socket, B over TCP loopback, both at the OS
// default send buffer.
func tcpVsUnix() model.Config {
	c := model.DefaultConfig()
	c.Sides[0].Transport = model.TransportUnix
	c.Sides[1].Transport = model.TransportTCP
	for i := range c.Sides {
		c.Sides[i].SndBuf = bufDefault
	}
	return c
}

// splitVsShared: both at the OS default send buffer, A on two cores, B on one.
func splitVsShared() model.Config {
	c := model.DefaultConfig()
	for i := range c.Sides {
		c.Sides[i].SndBuf = bufDefault
	}
	c.Sides[0].Placement = model.PlaceSplit
	c.Sides[1].Placement = model.PlaceShared
	return c
}

// sweepSizes are the sweep preset's points: default, then 64k … 4m.
func sweepSizes() []model.Buf {
	sizes := []model.Buf{bufDefault}
	for _, n := range []int{64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20} {
		sizes = append(sizes, sizeBuf(n))
	}
	return sizes
}

// Builtins returns the built-in presets, in their fixed order. The values
// are fresh copies.
func Builtins() []Preset { return builtins() }

// Builtin returns the built-in preset of that name (case-insensitive).
func Builtin(name string) (Preset, bool) {
	for _, p := range builtins() {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Preset{}, false
}

// IsBuiltin reports whether name is (case-insensitively) a built-in's name.
func IsBuiltin(name string) bool {
	_, ok := Builtin(name)
	return ok
}
