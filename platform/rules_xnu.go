package platform

import (
	"strconv"
	"strings"
)

// XNU's constants (bsd/i386/param.h and bsd/arm/param.h agree):
//
//	#define MSIZE           (1 << MSIZESHIFT)       /* size of an mbuf */   (256)
//	#define MCLBYTES        (1 << MCLSHIFT)         /* size of an mbuf cluster */  (2048)
//	#define SB_MAX          (8192*1024)     /* default for max chars in sockbuf */
const (
	xnuMSIZE    = 256
	xnuMCLBYTES = 2048
	xnuSBMax    = 8192 * 1024
)

// XNURules are macOS's, from apple-oss-distributions/xnu:
//
// bsd/kern/uipc_socket.c, sosetoptlock: a request is stored as given, or
// refused; it is never doubled:
//
//	if (sbreserve(sb, (u_int32_t)optval) == 0) {
//		error = ENOBUFS;
//		goto out;
//	}
//
// bsd/kern/uipc_socket2.c, sbreserve, up to xnu-10002 (macOS 14.3):
//
//	if ((u_quad_t)cc > (u_quad_t)sb_max_adj || ...) {
//		return 0;
//	}
//	sb->sb_hiwat = cc;
//
// with sb_max_adj = SB_MAX_ADJUST(sb_max) = sb_max * MCLBYTES /
// (SB_MSIZE_ADJ + MCLBYTES): 7456540 bytes (~7.1 MiB) for the default
// kern.ipc.maxsockbuf of 8 MiB. Above it setsockopt fails with ENOBUFS.
//
// From xnu-10063.101.15 (macOS 14.4, Darwin 23.4) sbreserve clamps to
// sb_max itself instead, and refuses only a socket already at sb_max:
//
//	if (cc > sb_max) {
//		/* We would not end up changing sb_cc, so return 0 */
//		if (sb->sb_hiwat == sb_max) {
//			return 0;
//		}
//		cc = sb_max;
//	}
//
// Which of the two a Mac runs is read from kern.osrelease and confirmed
// by the probe (a request one byte above the limit: ENOBUFS or clamped).
type XNURules struct{}

func (XNURules) Name() string  { return "xnu" }
func (XNURules) Doubles() bool { return false }

func (XNURules) LimitNames() []string {
	return []string{"kern.ipc.maxsockbuf", "kern.ipc.nmbclusters", "net.local.stream.sendspace", "net.local.stream.recvspace"}
}

// xnuClampsAbove reports whether a Darwin release has the clamping
// sbreserve (Darwin 23.4 = macOS 14.4 = xnu-10063.101.15, or later).
func xnuClampsAbove(release string) bool {
	f := strings.SplitN(release, ".", 3)
	major, err := strconv.Atoi(f[0])
	if err != nil {
		return false
	}
	minor := 0
	if len(f) > 1 {
		minor, _ = strconv.Atoi(f[1])
	}
	return major > 23 || major == 23 && minor >= 4
}

// Limit is worked out from kern.ipc.maxsockbuf as the running XNU does,
// then confirmed by the probe, which asks for at most kern.ipc.maxsockbuf
// + 1 (sbreserve never grants more than sb_max in any version).
func (XNURules) Limit(k Kernel) Limit {
	l := Limit{Rules: "xnu", Sysctl: "kern.ipc.maxsockbuf", Over: OverRefuses}
	sbMax, err := k.Sysctl(l.Sysctl)
	if err != nil || sbMax <= 0 {
		sbMax = xnuSBMax // the compiled-in default; the probe confirms it
	} else {
		l.SysctlValue = sbMax
	}
	// uipc_mbuf.c: high_sb_max = (nmbclusters << (MCLSHIFT - 4)); the
	// kern.ipc.maxsockbuf handler refuses more with ERANGE.
	if n, err := k.Sysctl("kern.ipc.nmbclusters"); err == nil && n > 0 {
		l.SysctlCeiling = n << (11 - 4)
	}
	l.MaxRequest = sbMax * xnuMCLBYTES / (xnuMSIZE + xnuMCLBYTES)
	if xnuClampsAbove(k.Release()) {
		l.Over, l.MaxRequest = OverClamps, sbMax
	}
	l = confirm(k, l, sbMax)
	if l.Over == OverClamps && l.MaxRequest == sbMax {
		l.MaxEffective = sbMax
	}
	return l
}
