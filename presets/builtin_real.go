package presets

import (
	"fmt"
	"strings"

	"nbdscope/model"
	"nbdscope/seed"
)

// The real-server presets run the qemu series' experiment with unpatched
// programs: qemu-nbd (or nbdkit) serves both sides, nbdscope changes its
// send buffer from outside (pidfd_getfd + setsockopt, Linux 5.6+), and our
// load or qemu-img reads. They are offered only where their programs are
// installed: listed everywhere (the explorer's picker is the same on
// every machine), asked for by name where a program is missing the error
// names it (Store.Preset), and a pair started from one without it fails
// to start its server, naming the program.

// qemuNbdServer serves a read-only null-co export of the side's size on
// its socket; -t keeps it serving client after client.
const qemuNbdServer = `qemu-nbd -r -t -e 0 -f raw -k {socket} 'json:{"file":{"driver":"null-co","size":{size}}}'`

// nbdkitServer serves nbdkit's null plugin (reads of zeroes) on its socket.
const nbdkitServer = "nbdkit -U {socket} -f null {size}"

// realPresets are the presets and the programs each needs.
var realPresets = map[string][]string{
	"qemu-nbd-gap":  {"qemu-nbd"},
	"nbdkit-gap":    {"nbdkit"},
	"qemu-nbd-read": {"qemu-nbd", "qemu-img"},
}

// missingPrograms are the programs of a real-server preset not on PATH
// (nil when all are, or name is not one).
func missingPrograms(name string) []string {
	var miss []string
	for _, prog := range realPresets[name] {
		if _, err := lookPath(prog); err != nil {
			miss = append(miss, prog)
		}
	}
	return miss
}

// missingServer says why a real-server preset cannot run here.
func missingServer(name string) error {
	miss := missingPrograms(name)
	if len(miss) == 0 {
		return nil
	}
	return fmt.Errorf("preset %q runs %s, not on PATH: it is offered once installed (apt-get install qemu-utils nbdkit)",
		name, strings.Join(miss, " and "))
}

// gapOf is the default pair with both sides served by server: A at 104k
// requested (208k effective on Linux: the default qemu-nbd kept before
// 10.1, set from outside so it holds on one that sets 2 MiB itself), B at
// 2m.
func gapOf(server string) model.Config {
	c := model.DefaultConfig()
	for i := range c.Sides {
		c.Sides[i].Server = server
	}
	c.Sides[0].SndBuf = sizeBuf(104 << 10)
	c.Sides[1].SndBuf = buf2M
	return c
}

func realBuiltins() []Preset {
	all := []Preset{{
		Name:        "qemu-nbd-gap",
		Description: "real qemu-nbd on both sides (null-co): A's send buffer at 208k effective, B's at 2 MiB, set from outside",
		Demonstrates: "The qemu series' change with the unpatched program: the same qemu-nbd, its socket's send buffer " +
			"changed by nbdscope (pidfd_getfd + setsockopt); its send calls and EAGAIN per 2 MiB, counted exactly, fall at 2 MiB.",
		Config: gapOf(qemuNbdServer),
	}, {
		Name:         "nbdkit-gap",
		Description:  "real nbdkit (null plugin) on both sides: A's send buffer at 208k effective, B's at 2 MiB",
		Demonstrates: "The same experiment against nbdkit: a server that keeps the kernel's default unless told.",
		Config:       gapOf(nbdkitServer),
	}, {
		Name:        "qemu-nbd-read",
		Description: "sweep qemu-img convert reading from a real qemu-nbd (null-co) over qemu-nbd's send buffer",
		Demonstrates: "The qemu series' first table made with unpatched programs: qemu-img reading from qemu-nbd, " +
			"time and both processes' calls per 2 MiB per buffer size.",
		Config: realSweepConfig(),
		Sweep:  execSweep(QemuImgRead, seed.QemuImgRead),
	}}
	return all
}

// realSweepConfig is the default pair whose side A (the one a sweep runs)
// is served by qemu-nbd.
func realSweepConfig() model.Config {
	c := model.DefaultConfig()
	c.Sides[0].Server = qemuNbdServer
	return c
}
