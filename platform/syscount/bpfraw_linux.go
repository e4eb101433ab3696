package syscount

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Raw syscall programs. The kernel's per-call tracepoints
// (syscalls:sys_enter_recvmsg, …) hand a BPF program the call's
// arguments only after perf has copied them twice (perf_syscall_enter),
// about 0.25 µs a call on the development VM, paid by every caller of a
// traced call on the machine, counted or not (BenchmarkOverhead, bpf/
// bystander). The raw tracepoints raw_syscalls:sys_enter and sys_exit
// run a program directly, at every system call, with its registers: a
// program that tells the calls it counts by number costs a caller a few
// nanoseconds, and a counted one the lookups it needs. It then reads the
// arguments from the registers itself, which is architecture-specific:
// rawABI, known for x86-64 (rawabi_linux_amd64.go); elsewhere the
// per-call tracepoints are used.

// rawABI is what the raw programs need to know of an architecture.
type rawABI struct {
	nr [NumSyscalls]int32 // each call's number; -1: none here
	// firstArg and callNr are where struct pt_regs holds the first
	// argument (the fd) and, at exit, the call's number.
	firstArg, callNr int16
	// native tells a native call from a 32-bit (compat) program's, which
	// the per-call tracepoints do not see either: the word at offset,
	// masked, is want.
	native rawCheck
}

type rawCheck struct {
	offset     int16
	mask, want int32
}

// readRegs emits: the word at offset in the caller's struct pt_regs (a
// pointer at ctx[0]; r6 holds ctx) read into r1; a failed read jumps to
// "out".
func readRegs(a *asm, offset int16) {
	a.emit(movReg(r1, r10), aluImm(aluADD, r1, rawWordSlot), movImm(r2, 8))
	a.emit(load(sizeDW, r3, r6, 0), aluImm(aluADD, r3, int32(offset)))
	a.emit(callHelper(helperProbeReadKernel))
	a.jumpTo(jmpJNE, r0, 0, "out")
	a.emit(load(sizeDW, r1, r10, rawWordSlot))
}

// nativeOnly emits: a 32-bit program's call jumps to "out".
func (abi *rawABI) nativeOnly(a *asm) {
	readRegs(a, abi.native.offset)
	a.emit(aluImm(aluAND, r1, abi.native.mask))
	a.jumpTo(jmpJNE, r1, abi.native.want, "out")
}

// dispatch emits: a jump to "call<s>" for each of calls whose number r2
// holds; any other call jumps to "out".
func (abi *rawABI) dispatch(a *asm, calls []Syscall) {
	for _, s := range calls {
		if abi.nr[s] >= 0 {
			a.jumpTo(jmpJEQ, r2, abi.nr[s], "call"+s.String())
		}
	}
	a.goTo("out")
}

// rawEnterProgram counts the entries to calls, on raw_syscalls:sys_enter
// (ctx: the registers, the call's number).
func (m bpfMaps) rawEnterProgram(abi *rawABI, calls []Syscall) *asm {
	a := &asm{}
	a.emit(movReg(r6, r1), load(sizeDW, r2, r6, 8))
	abi.dispatch(a, calls)
	for _, s := range calls {
		a.label("call" + s.String())
		a.scope = s.String()
		m.lookupProc(a)
		abi.nativeOnly(a)
		readRegs(a, abi.firstArg)
		a.emit(store(sizeDW, r10, rawFDSlot, r1))
		m.countEntry(a, s)
		a.goTo("out")
	}
	finish(a)
	return a
}

// rawExitProgram counts the exits that failed with EAGAIN, on
// raw_syscalls:sys_exit (ctx: the registers, the return value).
func (m bpfMaps) rawExitProgram(abi *rawABI, calls []Syscall) *asm {
	a := &asm{}
	a.emit(movReg(r6, r1), load(sizeDW, r1, r6, 8))
	a.jumpTo(jmpJNE, r1, eagainRet, "out")
	m.lookupProc(a)
	abi.nativeOnly(a)
	readRegs(a, abi.callNr)
	a.emit(movReg(r2, r1))
	abi.dispatch(a, calls)
	for _, s := range calls {
		a.label("call" + s.String())
		a.scope = s.String()
		m.eachWay(a, func(string) { addOne(a, eagainIndex(s)) })
		a.goTo("out")
	}
	finish(a)
	return a
}

// rawTracepointAttr is union bpf_attr for BPF_RAW_TRACEPOINT_OPEN.
type rawTracepointAttr struct {
	name   uint64
	progFD uint32
	_      uint32
}

// attachRaw loads a raw tracepoint program and attaches it to the
// tracepoint name; closing the returned fd detaches it.
func (e *bpfEngine) attachRaw(name string, a *asm) error {
	prog, err := loadProgramOfType(unix.BPF_PROG_TYPE_RAW_TRACEPOINT, name, a)
	if err != nil {
		return err
	}
	e.progs = append(e.progs, prog)
	tp := append([]byte(name), 0)
	attr := rawTracepointAttr{name: uint64(uintptr(unsafe.Pointer(&tp[0]))), progFD: uint32(prog)}
	fd, err := bpfCall(unix.BPF_RAW_TRACEPOINT_OPEN, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	if err != nil {
		return fmt.Errorf("attaching bpf program %s: %w", name, err)
	}
	e.events = append(e.events, fd)
	return nil
}
