package syscount

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/cilium/ebpf/asm"
)

// TestAtomicEncoding: each atomic operation the programs use reaches the
// kernel with its operation in the immediate (uapi bpf.h: BPF_ADD 0x00,
// BPF_OR 0x40, BPF_XCHG 0xe0|BPF_FETCH), where asm's Mem alone encodes
// every one as an add.
func TestAtomicEncoding(t *testing.T) {
	for _, c := range []struct {
		op  asm.AtomicOp
		imm uint32
	}{{asm.AddAtomic, 0x00}, {asm.OrAtomic, 0x40}, {asm.Xchg, 0xe1}} {
		var b bytes.Buffer
		if _, err := atomicMem(c.op, asm.R9, asm.R1, 8).Marshal(&b, binary.LittleEndian); err != nil {
			t.Fatal(err)
		}
		raw := b.Bytes()
		if raw[0] != 0xdb || binary.LittleEndian.Uint32(raw[4:]) != c.imm {
			t.Errorf("%v: opcode %#x imm %#x, want 0xdb and %#x", c.op, raw[0], binary.LittleEndian.Uint32(raw[4:]), c.imm)
		}
	}
}
