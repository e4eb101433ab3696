package syscount

import (
	"errors"
	"runtime"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// FillReference is a third measure of one unix socket's fill, for the
// tests only: a program on a timer of every CPU (the cpu-clock software
// event) reads the socket's level where it stands, whatever runs. The
// sampler reads it from a thread that must be scheduled, on the 2 cores
// the writer and reader share, and so reads it when they cannot run: at
// an 8 KiB buffer its empty % moved 41-63% between runs where the
// kernel's stayed 45-48%. A timer interrupt takes the CPU from whatever
// runs for a microsecond or so and reads the level at that instant: its
// samples are the time's, without the sampler's lean, and without the
// charge's lag that the kernel's fill programs date back.
type FillReference struct {
	m     *ebpf.Map
	hooks []hook
}

// fillRefValue is the reference's one map value: the socket (found by
// its inode at its next send call) and the samples' sums.
type fillRefValue struct {
	Sock, Inode, Samples, Bytes, Full, Empty uint64
}

// FillRefWindow is the reference's figures since Start.
type FillRefWindow struct {
	Samples                      uint64
	FullPct, EmptyPct, MeanBytes float64
}

// StartFillReference starts sampling the unix socket inode hz times a
// second on every CPU.
func StartFillReference(inode uint64, hz int) (*FillReference, error) {
	dir, o, err := fillGround()
	if err != nil {
		return nil, err
	}
	m, err := newMap("nbdscope_fillref", ebpf.Array, 4, uint32(unsafe.Sizeof(fillRefValue{})), 1)
	if err != nil {
		return nil, err
	}
	r := &FillReference{m: m}
	if err := m.Put(uint32(0), fillRefValue{Inode: inode}); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.attach(dir, o, hz); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *FillReference) attach(dir string, o fillOffsets, hz int) error {
	rec, err := readFillRecord(dir, "sock", "sock_send_length", "sk")
	if err != nil {
		return err
	}
	id, err := readEventID(dir, "sock", "sock_send_length")
	if err != nil {
		return err
	}
	prog, err := loadProgram("fillref_find", refFindProgram(o, rec, r.m))
	if err != nil {
		return err
	}
	h, err := attachProgram(id, "fillref_find", prog)
	r.hooks = append(r.hooks, h)
	if err != nil {
		return err
	}
	insns, err := refSampleProgram(o, r.m).program()
	if err != nil {
		return err
	}
	sample, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "fillref_sample", Type: ebpf.PerfEvent, License: "Dual MIT/GPL", Instructions: insns})
	if err != nil {
		return err
	}
	defer sample.Close() // each hook holds its own
	for cpu := range runtime.NumCPU() {
		p, err := sample.Clone()
		if err != nil {
			return err
		}
		h, err := attachTimer(cpu, uint64(1e9/hz), p)
		r.hooks = append(r.hooks, h)
		if err != nil {
			return err
		}
		if err := enableTimers([]hook{h}, true); err != nil {
			return err
		}
	}
	return nil
}

// Take is the reference's figures since it started.
func (r *FillReference) Take() (FillRefWindow, error) {
	var v fillRefValue
	if err := r.m.Lookup(uint32(0), &v); err != nil {
		return FillRefWindow{}, err
	}
	if v.Sock == 0 {
		return FillRefWindow{}, errors.New("the reference never saw the socket send")
	}
	n := float64(v.Samples)
	if n == 0 {
		return FillRefWindow{}, errors.New("the reference took no sample")
	}
	return FillRefWindow{Samples: v.Samples, FullPct: 100 * float64(v.Full) / n, EmptyPct: 100 * float64(v.Empty) / n, MeanBytes: float64(v.Bytes) / n}, nil
}

// Reset starts the reference's sums again, keeping the socket.
func (r *FillReference) Reset() error {
	var v fillRefValue
	if err := r.m.Lookup(uint32(0), &v); err != nil {
		return err
	}
	return r.m.Put(uint32(0), fillRefValue{Sock: v.Sock, Inode: v.Inode})
}

// Close stops the sampling.
func (r *FillReference) Close() {
	for _, h := range r.hooks {
		h.close()
	}
	r.m.Close()
}

// refValue emits: r9 = the reference's map value; out when none.
func refValue(a *builder, m *ebpf.Map) {
	a.emit(asm.Mov.Imm(asm.R1, 0), asm.StoreMem(asm.RFP, fillOneSlot, asm.R1, asm.Word))
	a.emit(mapPtr(asm.R1, m), asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, fillOneSlot), asm.FnMapLookupElem.Call())
	a.emit(asm.JEq.Imm(asm.R0, 0, "out"), asm.Mov.Reg(asm.R9, asm.R0))
}

// refFindProgram, at each send call: the sending socket's address, kept
// when its inode is the reference's.
func refFindProgram(o fillOffsets, rec fillRecord, m *ebpf.Map) *builder {
	a := &builder{}
	a.emit(asm.Mov.Reg(asm.R6, asm.R1), asm.LoadMem(asm.R7, asm.R6, rec.sk, asm.DWord), asm.LoadMem(asm.R8, asm.R6, rec.family, asm.Half))
	a.emit(asm.JEq.Imm(asm.R7, 0, "out"), asm.JNE.Imm(asm.R8, unix.AF_UNIX, "out"))
	probeRead(a, fillSocketSlot, 8, asm.R7, o.skSocket)
	a.emit(asm.JNE.Imm(asm.R0, 0, "out"), asm.LoadMem(asm.R1, asm.RFP, fillSocketSlot, asm.DWord), asm.JEq.Imm(asm.R1, 0, "out"))
	probeRead(a, fillInodeSlot, 8, asm.R1, o.inodeOfSocket)
	a.emit(asm.JNE.Imm(asm.R0, 0, "out"))
	refValue(a, m)
	a.emit(asm.LoadMem(asm.R1, asm.RFP, fillInodeSlot, asm.DWord), asm.LoadMem(asm.R2, asm.R9, 8, asm.DWord))
	a.emit(asm.JNE.Reg(asm.R1, asm.R2, "out"), asm.StoreMem(asm.R9, 0, asm.R7, asm.DWord))
	return finishFill(a)
}

// refSampleProgram, at each timer tick: the socket's level, counted.
func refSampleProgram(o fillOffsets, m *ebpf.Map) *builder {
	a := &builder{}
	refValue(a, m)
	a.emit(asm.LoadMem(asm.R7, asm.R9, 0, asm.DWord), asm.JEq.Imm(asm.R7, 0, "out"))
	fillLevel(a, o, false)
	a.emit(asm.Mov.Imm(asm.R1, 1), atomicMem(asm.AddAtomic, asm.R9, asm.R1, 16))
	a.emit(asm.Mov.Reg(asm.R3, asm.R8), asm.RSh.Imm(asm.R3, 32), asm.Mov.Reg(asm.R4, asm.R8), asm.LSh.Imm(asm.R4, 32), asm.RSh.Imm(asm.R4, 32))
	a.emit(atomicMem(asm.AddAtomic, asm.R9, asm.R3, 24), asm.JEq.Imm(asm.R4, 0, "out"))
	a.emit(asm.Mov.Reg(asm.R5, asm.R3), asm.Mul.Imm(asm.R5, 10), asm.Mov.Reg(asm.R0, asm.R4), asm.Mul.Imm(asm.R0, fillFullTenths))
	a.emit(asm.JLT.Reg(asm.R5, asm.R0, "notfull"), asm.Mov.Imm(asm.R1, 1), atomicMem(asm.AddAtomic, asm.R9, asm.R1, 32))
	a.label("notfull")
	a.emit(asm.Mov.Reg(asm.R0, asm.R4), asm.Mul.Imm(asm.R0, fillEmptyTenths))
	a.emit(asm.JGE.Reg(asm.R5, asm.R0, "out"), asm.Mov.Imm(asm.R1, 1), atomicMem(asm.AddAtomic, asm.R9, asm.R1, 40))
	a.label("out")
	a.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	return a
}
