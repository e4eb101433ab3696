package syscount

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// fillOffsets are where the fill program reads, from the kernel's BTF
// (/sys/kernel/btf/vmlinux): struct layouts change between kernels and
// configurations, so none is written here.
type fillOffsets struct {
	// In struct sock: the socket it belongs to, the bytes charged
	// against the send buffer (sk_wmem_alloc, a refcount_t holding them
	// plus 1, as sk_wmem_alloc_get reads it: SK_MEMINFO_WMEM_ALLOC, the
	// sampler's figure for unix), the limit.
	skSocket, wmemAlloc, sndbuf int32
	// inodeOfSocket is from a struct socket to its inode number: the
	// socket sits in a struct socket_alloc beside its inode
	// (SOCK_INODE), and i_ino is the inode number /proc shows.
	inodeOfSocket int32
	// skbSock and skbTruesize are struct sk_buff's owner and the bytes
	// it charges (sock_wfree releases them).
	skbSock, skbTruesize int32
	// unixPeer is struct unix_sock's peer: a receiver's sender.
	unixPeer int32
}

// loadFillOffsets reads the offsets from the kernel's BTF.
func loadFillOffsets() (fillOffsets, error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return fillOffsets{}, fmt.Errorf("the kernel's BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF): %w", err)
	}
	var o fillOffsets
	var errs []error
	off := func(typ, member string) int32 {
		v, err := memberOffset(spec, typ, member)
		errs = append(errs, err)
		return v
	}
	o.skSocket, o.wmemAlloc = off("sock", "sk_socket"), off("sock", "sk_wmem_alloc")
	o.sndbuf = off("sock", "sk_sndbuf")
	o.inodeOfSocket = off("socket_alloc", "vfs_inode") - off("socket_alloc", "socket") + off("inode", "i_ino")
	o.skbSock, o.skbTruesize = off("sk_buff", "sk"), off("sk_buff", "truesize")
	o.unixPeer = off("unix_sock", "peer")
	return o, errors.Join(errs...)
}

// memberOffset is the byte offset of member in struct typ, looked for in
// its anonymous structs and unions too.
func memberOffset(spec *btf.Spec, typ, member string) (int32, error) {
	var s *btf.Struct
	if err := spec.TypeByName(typ, &s); err != nil {
		return 0, fmt.Errorf("struct %s in the kernel's BTF: %w", typ, err)
	}
	if off, ok := findMember(s.Members, member); ok {
		return off, nil
	}
	return 0, fmt.Errorf("struct %s has no member %s at a byte offset in the kernel's BTF", typ, member)
}

func findMember(members []btf.Member, name string) (int32, bool) {
	for _, m := range members {
		if m.Name == name && m.BitfieldSize == 0 && m.Offset%8 == 0 {
			return int32(m.Offset / 8), true
		}
		if m.Name != "" {
			continue
		}
		var inner []btf.Member
		switch t := btf.UnderlyingType(m.Type).(type) {
		case *btf.Struct:
			inner = t.Members
		case *btf.Union:
			inner = t.Members
		}
		if off, ok := findMember(inner, name); ok && m.Offset%8 == 0 {
			return int32(m.Offset/8) + off, true
		}
	}
	return 0, false
}

// fillGround is what every fill program stands on: the tracefs directory
// of the socket layer's tracepoints and the struct offsets from the
// kernel's BTF; an error says which is missing.
func fillGround() (dir string, o fillOffsets, err error) {
	tp, err := loadTracepoints()
	if err != nil {
		return "", o, err
	}
	o, err = loadFillOffsets()
	return tp.dir, o, err
}
