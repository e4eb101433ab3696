package syscount

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The few eBPF instructions the counting programs need, encoded as the
// kernel's struct bpf_insn (include/uapi/linux/bpf.h): an opcode, the
// destination and source registers in one byte, a 16-bit offset and a
// 32-bit immediate. The programs are small and fixed (bpfprog_linux.go),
// so a dozen constructors written against the uapi header are clearer
// than a BPF toolchain or a library, and need no C compiler at build
// time.

// A register: r0 return value, r1-r5 arguments (clobbered by calls),
// r6-r9 kept across calls, r10 the frame pointer (read only).
type reg uint8

const (
	r0 reg = iota
	r1
	r2
	r3
	r4
	r5
	r6
	r7
	r8
	r9
	r10
)

// Opcode parts (uapi bpf.h and bpf_common.h).
const (
	classLD    = 0x00
	classLDX   = 0x01
	classSTX   = 0x03
	classALU64 = 0x07
	classJMP   = 0x05

	sizeW  = 0x00 // 32 bits
	sizeDW = 0x18 // 64 bits

	modeIMM    = 0x00
	modeMEM    = 0x60
	modeATOMIC = 0xc0

	srcK = 0x00 // the immediate
	srcX = 0x08 // the source register

	aluADD  = 0x00
	aluOR   = 0x40
	aluAND  = 0x50
	aluLSH  = 0x60
	aluRSH  = 0x70
	aluMOV  = 0xb0
	aluARSH = 0xc0

	jmpJEQ  = 0x10
	jmpJNE  = 0x50
	jmpCALL = 0x80
	jmpEXIT = 0x90

	// pseudoMapFD in a 64-bit immediate load's source register: the
	// immediate is a map's fd, which the kernel replaces with the map.
	pseudoMapFD = 1
)

// The kernel helpers called (enum bpf_func_id).
const (
	helperMapLookupElem     = 1
	helperMapUpdateElem     = 2
	helperMapDeleteElem     = 3
	helperGetCurrentPidTgid = 14
)

// insn is one struct bpf_insn.
type insn struct {
	code uint8
	regs uint8 // dst in the low nibble, src in the high one
	off  int16
	imm  int32
}

func mkInsn(code uint8, dst, src reg, off int16, imm int32) insn {
	return insn{code: code, regs: uint8(dst) | uint8(src)<<4, off: off, imm: imm}
}

// movReg is dst = src; movImm is dst = imm (sign-extended).
func movReg(dst, src reg) insn { return mkInsn(classALU64|aluMOV|srcX, dst, src, 0, 0) }
func movImm(dst reg, imm int32) insn {
	return mkInsn(classALU64|aluMOV|srcK, dst, 0, 0, imm)
}

// aluImm is dst op= imm; aluReg is dst op= src (64-bit).
func aluImm(op uint8, dst reg, imm int32) insn { return mkInsn(classALU64|op|srcK, dst, 0, 0, imm) }
func aluReg(op uint8, dst, src reg) insn       { return mkInsn(classALU64|op|srcX, dst, src, 0, 0) }

// load is dst = *(size *)(src + off); store is *(size *)(dst + off) = src.
func load(size uint8, dst, src reg, off int16) insn {
	return mkInsn(classLDX|size|modeMEM, dst, src, off, 0)
}
func store(size uint8, dst reg, off int16, src reg) insn {
	return mkInsn(classSTX|size|modeMEM, dst, src, off, 0)
}

// atomicAdd is lock *(u64 *)(dst + off) += src.
func atomicAdd(dst reg, off int16, src reg) insn {
	return mkInsn(classSTX|sizeDW|modeATOMIC, dst, src, off, aluADD)
}

// atomicOr is *(u64 *)(dst + off) |= src, atomically (Linux 5.12+).
func atomicOr(dst reg, off int16, src reg) insn {
	return mkInsn(classSTX|sizeDW|modeATOMIC, dst, src, off, aluOR)
}

// jumpImm jumps off instructions ahead when dst op imm; ja always does.
func jumpImm(op uint8, dst reg, imm int32, off int16) insn {
	return mkInsn(classJMP|op|srcK, dst, 0, off, imm)
}
func callHelper(helper int32) insn { return mkInsn(classJMP|jmpCALL, 0, 0, 0, helper) }
func exitInsn() insn               { return mkInsn(classJMP|jmpEXIT, 0, 0, 0, 0) }
func loadMap(dst reg, fd int) []insn {
	// A 64-bit immediate takes two instructions; the second holds the
	// upper half (zero for an fd).
	return []insn{mkInsn(classLD|sizeDW|modeIMM, dst, pseudoMapFD, 0, int32(fd)), {}}
}

// asm is a program being written, with named forward jumps: a jump to a
// label is patched when the label is placed, so the programs read top
// to bottom without counted offsets.
type asm struct {
	insns   []insn
	pending map[string][]int // label -> indexes of the jumps to it
}

func (a *asm) emit(is ...insn) { a.insns = append(a.insns, is...) }

// jumpTo emits a conditional jump (op, against imm) to label.
func (a *asm) jumpTo(op uint8, dst reg, imm int32, label string) {
	if a.pending == nil {
		a.pending = map[string][]int{}
	}
	a.pending[label] = append(a.pending[label], len(a.insns))
	a.emit(jumpImm(op, dst, imm, 0))
}

// label places label here: every jump to it lands on the next
// instruction.
func (a *asm) label(label string) {
	for _, at := range a.pending[label] {
		a.insns[at].off = int16(len(a.insns) - at - 1)
	}
	delete(a.pending, label)
}

// bytes is the program as the kernel reads it (little- or big-endian as
// the machine: struct bpf_insn is native).
func (a *asm) bytes() ([]byte, error) {
	if len(a.pending) > 0 {
		return nil, fmt.Errorf("bpf program: jumps to labels never placed: %v", a.pending)
	}
	b := make([]byte, 0, 8*len(a.insns))
	for _, in := range a.insns {
		b = append(b, in.code, in.regs)
		b = binary.NativeEndian.AppendUint16(b, uint16(in.off))
		b = binary.NativeEndian.AppendUint32(b, uint32(in.imm))
	}
	return b, nil
}

// The bpf(2) commands used, and their attribute layouts (union bpf_attr).

type mapCreateAttr struct {
	mapType    uint32
	keySize    uint32
	valueSize  uint32
	maxEntries uint32
	mapFlags   uint32
	innerMapFD uint32
	numaNode   uint32
	name       [unix.BPF_OBJ_NAME_LEN]byte
}

type mapElemAttr struct {
	mapFD uint32
	_     uint32
	key   uint64
	value uint64 // or next_key, for BPF_MAP_GET_NEXT_KEY
	flags uint64
}

type progLoadAttr struct {
	progType    uint32
	insnCount   uint32
	insns       uint64
	license     uint64
	logLevel    uint32
	logSize     uint32
	logBuf      uint64
	kernVersion uint32
	progFlags   uint32
	name        [unix.BPF_OBJ_NAME_LEN]byte
}

func bpfCall(cmd int, attr unsafe.Pointer, size uintptr) (int, error) {
	r, _, errno := unix.Syscall(unix.SYS_BPF, uintptr(cmd), uintptr(attr), size)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// createMap makes a map; its fd closes with the process or closeFD.
func createMap(name string, mapType, keySize, valueSize, entries uint32) (int, error) {
	attr := mapCreateAttr{mapType: mapType, keySize: keySize, valueSize: valueSize, maxEntries: entries}
	copy(attr.name[:unix.BPF_OBJ_NAME_LEN-1], name)
	fd, err := bpfCall(unix.BPF_MAP_CREATE, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	if err != nil {
		return -1, fmt.Errorf("creating bpf map %s: %w", name, err)
	}
	return fd, nil
}

// mapOp is one lookup, update, delete or next-key on a map.
func mapOp(cmd int, fd int, key, value unsafe.Pointer, flags uint64) error {
	attr := mapElemAttr{mapFD: uint32(fd), key: uint64(uintptr(key)), value: uint64(uintptr(value)), flags: flags}
	_, err := bpfCall(cmd, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	return err
}

// bpfLicense is the programs' license: GPL-compatible, though the
// programs call no GPL-only helper.
var bpfLicense = []byte("Dual MIT/GPL\x00")

// loadProgram loads a tracepoint program. When the verifier refuses it,
// the error carries the verifier's log, which says at which instruction.
func loadProgram(name string, a *asm) (int, error) {
	code, err := a.bytes()
	if err != nil {
		return -1, err
	}
	logBuf := make([]byte, 64<<10)
	attr := progLoadAttr{progType: unix.BPF_PROG_TYPE_TRACEPOINT, insnCount: uint32(len(a.insns)),
		insns: uint64(uintptr(unsafe.Pointer(&code[0]))), license: uint64(uintptr(unsafe.Pointer(&bpfLicense[0])))}
	copy(attr.name[:unix.BPF_OBJ_NAME_LEN-1], name)
	fd, err := progLoad(&attr)
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EINVAL) {
		// Again with the log, to say why.
		attr.logLevel, attr.logSize = 1, uint32(len(logBuf))
		attr.logBuf = uint64(uintptr(unsafe.Pointer(&logBuf[0])))
		fd, err = progLoad(&attr)
	}
	if err != nil {
		log := strings.TrimSpace(strings.TrimRight(string(logBuf), "\x00"))
		if log != "" {
			return -1, fmt.Errorf("loading bpf program %s: %w: %s", name, err, lastLines(log, 6))
		}
		return -1, fmt.Errorf("loading bpf program %s: %w", name, err)
	}
	return fd, nil
}

// progLoad is BPF_PROG_LOAD, made again when the verifier gave up
// because a signal came (EAGAIN: the Go runtime signals its threads to
// preempt them), as libbpf does.
func progLoad(attr *progLoadAttr) (int, error) {
	var fd int
	var err error
	for range 10 {
		fd, err = bpfCall(unix.BPF_PROG_LOAD, unsafe.Pointer(attr), unsafe.Sizeof(*attr))
		if !errors.Is(err, unix.EAGAIN) {
			break
		}
	}
	return fd, err
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// possibleCPUs is how many CPUs the kernel may ever bring up: a per-CPU
// map's lookup returns a value for each (kernel/bpf: num_possible_cpus).
func possibleCPUs() (int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		return 0, fmt.Errorf("reading the possible CPUs: %w", err)
	}
	return countCPUList(strings.TrimSpace(string(b)))
}

// countCPUList counts the CPUs of a kernel CPU list ("0-3,5").
func countCPUList(list string) (int, error) {
	n := 0
	for part := range strings.SplitSeq(list, ",") {
		var lo, hi int
		if _, err := fmt.Sscanf(part, "%d-%d", &lo, &hi); err == nil && hi >= lo {
			n += hi - lo + 1
			continue
		}
		if _, err := fmt.Sscanf(part, "%d", &lo); err != nil {
			return 0, fmt.Errorf("bad CPU list %q", list)
		}
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("bad CPU list %q", list)
	}
	return n, nil
}
