package presets

import (
	"fmt"
	"os/exec"

	"nbdscope/model"
	"nbdscope/seed"
)

// The exec presets sweep real clients (nbdscope sweep --preset NAME) with
// the commands the seed measured: qemu-img convert reading or writing
// against a null-co image on the other end, so only the NBD side costs,
// and nbdcopy --blkhash. The server is nbdscope's own, null backend (reads
// return 0xff), 4 GiB, over the sizes of the published tables.

// qemuNullCo is a raw image on qemu's null-co driver the size of the
// export: the other end of a convert that costs nothing.
const qemuNullCo = `'json:{"file":{"driver":"null-co","size":{size}}}'`

// lookPath finds a client program; tests replace it.
var lookPath = exec.LookPath

// blksumPreset is offered only where blksum is installed (it is not
// packaged everywhere: Debian 12 has none).
const blksumPreset = "blksum-exec"

// missingClient says why a built-in that needs a client program is not
// offered here, or returns nil: a user asking for it by name learns which
// program is missing instead of reading that the preset does not exist.
func missingClient(name string) error {
	if name != blksumPreset {
		return nil
	}
	if _, err := lookPath("blksum"); err == nil {
		return nil
	}
	return fmt.Errorf("preset %q sweeps blksum, which is not on PATH: it is offered once blksum is installed "+
		"(nirs/blkhash), or give the command yourself: nbdscope sweep --exec 'blksum {uri}'", name)
}

// execSweep sweeps cmd over the published sizes; seedCase names the
// series' table it reproduces (package seed), or is "".
func execSweep(cmd, seedCase string) *SweepSpec {
	sizes := []model.Buf{bufDefault}
	for _, n := range []int{64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20} {
		sizes = append(sizes, sizeBuf(n))
	}
	return &SweepSpec{Sizes: sizes, Bytes: 4 << 30, Repeat: 3, Setting: model.SetSndBuf,
		Exec: &model.ExecSpec{Command: cmd, Warmup: 1, Seed: seedCase}}
}

func execBuiltins() []Preset {
	var ps []Preset
	ps = append(ps, Preset{
		Name:        "qemu-img-read",
		Description: "sweep qemu-img convert reading the export into a null-co image (nbdscope sweep --preset qemu-img-read)",
		Demonstrates: "The seed's first table, with the real qemu-img: 1 connection, 2 MiB reads; the server's send calls " +
			"and EAGAIN per 2 MiB fall as its send buffer grows, and the time with them (2.28x at 2 MiB on Linux).",
		Config: model.DefaultConfig(),
		Sweep:  execSweep(QemuImgRead, seed.QemuImgRead),
	})
	ps = append(ps, Preset{
		Name:        "qemu-img-write",
		Description: "sweep qemu-img convert writing a null-co image to the export (null backend)",
		Demonstrates: "Writes: qemu-img sends the bulk data, so the server's receive calls per 2 MiB are the figure; " +
			"the server's send buffer only carries replies and matters little. -S 0 keeps qemu-img from turning zeroes into WRITE_ZEROES.",
		Config: model.DefaultConfig(),
		Sweep:  execSweep("qemu-img convert -f raw -O raw -W -n -S 0 "+qemuNullCo+" {uri}", seed.QemuImgWrite),
	})
	s := execSweep("nbdcopy --blkhash {uri} null:", seed.NbdcopyHash)
	s.Exec.Needs, s.Exec.Fallback = "--blkhash", "nbdcopy {uri} null:"
	ps = append(ps, Preset{
		Name:        "nbdcopy-blkhash",
		Description: "sweep nbdcopy --blkhash (or plain nbdcopy to null: where it has no --blkhash; the sweep says so)",
		Demonstrates: "4 connections and many requests in flight keep the socket full, so the buffer matters less " +
			"than for qemu-img (the seed measured 1.19x on Linux), but the server's calls per 2 MiB still fall.",
		Config: model.DefaultConfig(),
		Sweep:  s,
	})
	if missingClient(blksumPreset) == nil {
		ps = append(ps, Preset{
			Name:        blksumPreset,
			Description: "sweep blksum hashing the export (offered only when blksum is installed)",
			Demonstrates: "blksum reads with 256 KiB requests and hashes each block: the seed measured 2.65x on Linux " +
				"with a 2 MiB send buffer.",
			Config: model.DefaultConfig(),
			Sweep:  execSweep("blksum {uri}", seed.Blksum),
		})
	}
	return ps
}
