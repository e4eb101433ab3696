package sockdiag

import "strings"

// A C struct layout, computed the way the compilers for 64-bit macOS lay
// a struct out (each member at the next multiple of its alignment, the
// struct padded to its largest alignment), so that the XNU reader's
// hand-computed offsets are checked against the declarations in XNU's
// bsd/sys/proc_info.h, member by member, rather than against themselves.
type ctype struct {
	size, align int
	offs        map[string]int // member paths ("psi.soi_rcv.sbi_cc") to offsets
}

type cmember struct {
	name string
	t    ctype
}

func prim(n int) ctype            { return ctype{size: n, align: n} }
func carray(t ctype, n int) ctype { return ctype{size: t.size * n, align: t.align} }

func cstruct(ms ...cmember) ctype { return clayout(false, ms) }
func cunion(ms ...cmember) ctype  { return clayout(true, ms) }

func clayout(union bool, ms []cmember) ctype {
	t := ctype{align: 1, offs: map[string]int{}}
	at := 0
	for _, m := range ms {
		if !union {
			at = (at + m.t.align - 1) / m.t.align * m.t.align
		}
		t.offs[m.name] = at
		for sub, o := range m.t.offs {
			t.offs[m.name+"."+sub] = at + o
		}
		t.align = max(t.align, m.t.align)
		if union {
			t.size = max(t.size, m.t.size)
		} else {
			at += m.t.size
		}
	}
	if !union {
		t.size = at
	}
	t.size = (t.size + t.align - 1) / t.align * t.align
	return t
}

func (t ctype) off(path ...string) int {
	o, ok := t.offs[strings.Join(path, ".")]
	if !ok {
		panic("no member " + strings.Join(path, "."))
	}
	return o
}

var (
	u8, u16, u32, u64 = prim(1), prim(2), prim(4), prim(8)

	procFileinfo = cstruct(cmember{"fi_openflags", u32}, cmember{"fi_status", u32}, cmember{"fi_offset", u64},
		cmember{"fi_type", u32}, cmember{"fi_guardflags", u32})
	vinfoStat = cstruct(cmember{"vst_dev", u32}, cmember{"vst_mode", u16}, cmember{"vst_nlink", u16},
		cmember{"vst_ino", u64}, cmember{"vst_uid", u32}, cmember{"vst_gid", u32},
		cmember{"vst_atime", u64}, cmember{"vst_atimensec", u64}, cmember{"vst_mtime", u64},
		cmember{"vst_mtimensec", u64}, cmember{"vst_ctime", u64}, cmember{"vst_ctimensec", u64},
		cmember{"vst_birthtime", u64}, cmember{"vst_birthtimensec", u64}, cmember{"vst_size", u64},
		cmember{"vst_blocks", u64}, cmember{"vst_blksize", u32}, cmember{"vst_flags", u32},
		cmember{"vst_gen", u32}, cmember{"vst_rdev", u32}, cmember{"vst_qspare", carray(u64, 2)})
	sockbufInfo = cstruct(cmember{"sbi_cc", u32}, cmember{"sbi_hiwat", u32}, cmember{"sbi_mbcnt", u32},
		cmember{"sbi_mbmax", u32}, cmember{"sbi_lowat", u32}, cmember{"sbi_flags", u16}, cmember{"sbi_timeo", u16})
	in4in6Addr = cstruct(cmember{"i46a_pad32", carray(u32, 3)}, cmember{"i46a_addr4", u32})
	in6Addr    = cunion(cmember{"u8", carray(u8, 16)}, cmember{"u32", carray(u32, 4)})
	inAddrs    = cunion(cmember{"ina_46", in4in6Addr}, cmember{"ina_6", in6Addr})
	inSockinfo = cstruct(cmember{"insi_fport", u32}, cmember{"insi_lport", u32}, cmember{"insi_gencnt", u64},
		cmember{"insi_flags", u32}, cmember{"insi_flow", u32}, cmember{"insi_vflag", u8},
		cmember{"insi_ip_ttl", u8}, cmember{"rfu_1", u32}, cmember{"insi_faddr", inAddrs},
		cmember{"insi_laddr", inAddrs}, cmember{"insi_v4", cstruct(cmember{"in4_tos", u8})},
		cmember{"insi_v6", cstruct(cmember{"in6_hlim", u8}, cmember{"in6_cksum", u32},
			cmember{"in6_ifindex", u16}, cmember{"in6_hops", u16})})
	tcpSockinfo = cstruct(cmember{"tcpsi_ini", inSockinfo}, cmember{"tcpsi_state", u32},
		cmember{"tcpsi_timer", carray(u32, 4)}, cmember{"tcpsi_mss", u32}, cmember{"tcpsi_flags", u32},
		cmember{"rfu_1", u32}, cmember{"tcpsi_tp", u64})
	sockaddrUnUnion = cunion(cmember{"ua_sun", cstruct(cmember{"sun_len", u8}, cmember{"sun_family", u8},
		cmember{"sun_path", carray(u8, 104)})}, cmember{"ua_dummy", carray(u8, 255)})
	unSockinfo = cstruct(cmember{"unsi_conn_so", u64}, cmember{"unsi_conn_pcb", u64},
		cmember{"unsi_addr", sockaddrUnUnion}, cmember{"unsi_caddr", sockaddrUnUnion})
	socketInfo = cstruct(cmember{"soi_stat", vinfoStat}, cmember{"soi_so", u64}, cmember{"soi_pcb", u64},
		cmember{"soi_type", u32}, cmember{"soi_protocol", u32}, cmember{"soi_family", u32},
		cmember{"soi_options", u16}, cmember{"soi_linger", u16}, cmember{"soi_state", u16},
		cmember{"soi_qlen", u16}, cmember{"soi_incqlen", u16}, cmember{"soi_qlimit", u16},
		cmember{"soi_timeo", u16}, cmember{"soi_error", u16}, cmember{"soi_oobmark", u32},
		cmember{"soi_rcv", sockbufInfo}, cmember{"soi_snd", sockbufInfo}, cmember{"soi_kind", u32},
		cmember{"rfu_1", u32}, cmember{"soi_proto", cunion(cmember{"pri_in", inSockinfo},
			cmember{"pri_tcp", tcpSockinfo}, cmember{"pri_un", unSockinfo},
			cmember{"pri_ndrv", cstruct(cmember{"a", u32}, cmember{"b", u32}, cmember{"name", carray(u8, 16)})},
			cmember{"pri_kern_event", carray(u32, 3)},
			cmember{"pri_kern_ctl", cstruct(cmember{"ids", carray(u32, 6)}, cmember{"name", carray(u8, 96)})},
			cmember{"pri_vsock", carray(u32, 4)})})
	socketFdinfo = cstruct(cmember{"pfi", procFileinfo}, cmember{"psi", socketInfo})
)
