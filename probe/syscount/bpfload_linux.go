package syscount

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// The programs are written with github.com/cilium/ebpf's asm package and
// loaded, with their maps and links, by that library: pure Go, so `go
// build` needs no C compiler and no generated objects to stay in step
// with the sources. The programs are small and their struct offsets come
// at run time (tracepoint formats, kernel BTF), which asm says directly;
// bpf2go objects would need clang to change them and commit binaries.

// builder collects a program's instructions with named jump targets:
// label names the next instruction emitted.
type builder struct {
	insns   asm.Instructions
	pending string
	// alias: a label placed where another already waits for the same
	// instruction jumps to that one (an instruction carries one symbol).
	alias map[string]string
}

func (b *builder) emit(is ...asm.Instruction) {
	for _, in := range is {
		if b.pending != "" {
			in, b.pending = in.WithSymbol(b.pending), ""
		}
		b.insns = append(b.insns, in)
	}
}

// label places label here: every jump to it lands on the next
// instruction.
func (b *builder) label(label string) {
	if b.pending == "" {
		b.pending = label
		return
	}
	if b.alias == nil {
		b.alias = map[string]string{}
	}
	b.alias[label] = b.pending
}

// program is the finished instructions, jumps resolved to their labels.
func (b *builder) program() (asm.Instructions, error) {
	if b.pending != "" {
		return nil, fmt.Errorf("bpf program: label %s ends the program", b.pending)
	}
	out := make(asm.Instructions, len(b.insns))
	for i, in := range b.insns {
		if to, ok := b.alias[in.Reference()]; ok && in.OpCode.JumpOp() != asm.InvalidJumpOp {
			in = in.WithReference(to)
		}
		out[i] = in
	}
	return out, nil
}

// mapPtr loads m's address into dst.
func mapPtr(dst asm.Register, m *ebpf.Map) asm.Instruction { return asm.LoadMapPtr(dst, m.FD()) }

// newMap makes a map; it is freed when closed and no program uses it.
func newMap(name string, typ ebpf.MapType, keySize, valueSize, entries uint32) (*ebpf.Map, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: name, Type: typ, KeySize: keySize, ValueSize: valueSize, MaxEntries: entries})
	if err != nil {
		return nil, fmt.Errorf("creating bpf map %s: %w", name, err)
	}
	return m, nil
}

// loadProgram loads a tracepoint program. When the verifier refuses it,
// the error is a *ebpf.VerifierError carrying its log, which says at
// which instruction (VerifierLog).
func loadProgram(name string, b *builder) (*ebpf.Program, error) {
	return loadProgramType(name, ebpf.TracePoint, b)
}

// loadProgramType is loadProgram for a program of type typ.
func loadProgramType(name string, typ ebpf.ProgramType, b *builder) (*ebpf.Program, error) {
	insns, err := b.program()
	if err != nil {
		return nil, err
	}
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: name, Type: typ, License: "Dual MIT/GPL", Instructions: insns})
	if err != nil {
		return nil, fmt.Errorf("loading bpf program %s: %w", name, err)
	}
	return p, nil
}

// VerifierLog is the kernel verifier's log in err, the last lines first
// trimmed to n ("" when err holds none: a refusal before verification,
// such as missing rights).
func VerifierLog(err error, n int) string {
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) || len(ve.Log) == 0 {
		return ""
	}
	lines := ve.Log
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// hook is one program hung on a tracepoint: the link, and the perf
// event that carries it.
type hook struct {
	prog  *ebpf.Program
	link  link.Link
	event int
}

func (h hook) close() {
	if h.link != nil {
		h.link.Close()
	}
	if h.event >= 0 {
		unix.Close(h.event)
	}
	h.prog.Close()
}

// attachProgram hangs prog on tracepoint id through one perf event, on
// one CPU: a tracepoint runs its programs wherever it fires, once the
// event is opened (which registers the tracepoint), whether the event is
// enabled or not. It is left disabled, so that it never counts itself:
// what the programs hand on (finish) costs only the perf events others
// opened. link.Tracepoint would open it enabled, sampling every call on
// CPU 0, so the event is opened here and linked with link.AttachRawLink
// (BPF_LINK_CREATE, Linux 5.15+), or by the older ioctl.
func attachProgram(id uint64, name string, prog *ebpf.Program) (hook, error) {
	h := hook{prog: prog, event: -1}
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_TRACEPOINT, Config: id, Bits: unix.PerfBitDisabled}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, err := unix.PerfEventOpen(&attr, -1, 0, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return h, fmt.Errorf("opening tracepoint %d for bpf program %s: %w", id, name, err)
	}
	h.event = fd
	h.link, err = link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent})
	if err == nil {
		return h, nil
	}
	if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_BPF, prog.FD()); err != nil {
		return h, fmt.Errorf("attaching bpf program %s: %w", name, err)
	}
	return h, nil
}

// atomicMem is op.Mem on 64 bits with the operation in Constant too:
// cilium/ebpf v0.22.0's Instruction.Marshal takes the immediate from
// Constant before it moves the operation there, so op.Mem alone reaches
// the kernel with an immediate of 0, an add: OrAtomic would add the bit
// (carrying into the next where it was set) and Xchg would add without
// fetching (TestAtomicEncoding).
func atomicMem(op asm.AtomicOp, dst, src asm.Register, off int16) asm.Instruction {
	in := op.Mem(dst, src, asm.DWord, off)
	in.Constant = int64(op >> 8)
	return in
}
