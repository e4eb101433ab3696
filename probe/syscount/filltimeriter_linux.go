package syscount

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// The timer finds a watched socket's struct sock in two ways:
//   - at once, when the watch list grows: fill_iter, a BPF iterator over
//     the unix sockets of nbdscope's network namespace (iter/unix, Linux
//     5.17+), is run once (read to its end) and writes the address of
//     every socket whose inode is watched into its slot. An idle sender,
//     or a server stuck with its buffer full, is measured from the
//     moment it is watched;
//   - at a send call: fill_find (filltimerprog_linux.go), the fallback
//     where iterators are not available, and the way a socket of another
//     network namespace is found.
// Both write the same address, and the tick checks the inode at every
// read, so a socket found by both, or found again, is read once a tick.

// sockFinder is a backend that finds its watched sockets when told the
// watch list grew, rather than at each one's next send call.
type sockFinder interface {
	findWatched() error
}

// bpf_iter__unix's members, as the iterator's program gets them: the
// meta, then the unix socket (a struct unix_sock, which begins with its
// struct sock; NULL at the iteration's end), each a u64.
const iterUnixSock = 8

// fillIterProgram, run by the iterator for each unix socket: a watched
// socket's address into its slot, and a count of the sockets found.
func fillIterProgram(o fillOffsets, m fillTimerMaps) *builder {
	a := &builder{}
	a.emit(asm.Mov.Reg(asm.R6, asm.R1), asm.LoadMem(asm.R7, asm.R6, iterUnixSock, asm.DWord), asm.JEq.Imm(asm.R7, 0, "out"))
	watchedSlot(a, o, m)
	a.emit(asm.StoreMem(asm.R0, slotSock, asm.R7, asm.DWord))
	metaCount(a, m.meta, metaIterFinds)
	a.label("out")
	a.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	return a
}

// loadIter loads fill_iter and attaches it as an iterator over unix
// sockets; an error says why the timer finds its sockets at their send
// calls only.
func (t *fillTimer) loadIter(o fillOffsets) error {
	insns, err := fillIterProgram(o, t.maps).program()
	if err != nil {
		return err
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "fill_iter", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceIter,
		AttachTo: "unix", License: "Dual MIT/GPL", Instructions: insns})
	if err != nil {
		return fmt.Errorf("loading the iterator over unix sockets (iter/unix, Linux 5.17+): %w", err)
	}
	it, err := link.AttachIter(link.IterOptions{Program: prog})
	if err != nil {
		prog.Close()
		return fmt.Errorf("attaching the iterator over unix sockets: %w", err)
	}
	t.iter, t.iterProg = it, prog
	return nil
}

// findWatched runs the iterator once: every watched unix socket of this
// network namespace gets its address in its slot now. The find program
// runs at send calls only while a watched socket is left unfound.
func (t *fillTimer) findWatched() error {
	if t.iter != nil {
		if err := t.runIter(); err != nil {
			t.dropIter(fmt.Errorf("running the iterator over unix sockets: %w", err))
		}
	}
	return t.syncFind()
}

func (t *fillTimer) runIter() error {
	r, err := t.iter.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(io.Discard, r)
	return err
}

// syncFind hangs the find program on the send calls where a watched
// socket has no address yet (no iterator, a socket of another network
// namespace), and takes it off where every one has: then no send call
// on the machine pays for it (about 180 ns each, doctor).
func (t *fillTimer) syncFind() error {
	need := t.iter == nil
	for ino, slot := range t.slots {
		var v fillSlot
		if need = need || (t.maps.slots.Lookup(slot, &v) == nil && v.Inode == ino && v.Sock == 0); need {
			break
		}
	}
	if err := t.setFind(need); err != nil {
		return fmt.Errorf("the fill timer's program at send calls, for a socket the iterator did not find: %w", err)
	}
	return nil
}

// setFind attaches the find program, or detaches it.
func (t *fillTimer) setFind(on bool) error {
	if on == (len(t.find) > 0) {
		return nil
	}
	if !on {
		for _, h := range t.find {
			h.close()
		}
		t.find = nil
		return nil
	}
	hook := fillHook{"sock", "sock_send_length", "sk", "fill_find", nil}
	err := attachFillHook(&t.find, t.dir, hook, func(rec fillRecord) *builder { return fillFindProgram(t.off, rec, t.maps) })
	if err != nil {
		t.setFind(false) // what attached before the failure
	}
	return err
}

// finding says whether the find program is on the send calls now.
func (t *fillTimer) finding() bool { return len(t.find) > 0 }

// dropIter closes the iterator after it failed, so that the timer says
// it finds its sockets at their send calls from then on, and why.
func (t *fillTimer) dropIter(err error) error {
	t.iter.Close()
	t.iterProg.Close()
	t.iter, t.iterProg, t.iterErr = nil, nil, err
	return err
}
