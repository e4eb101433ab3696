package engine

import (
	"fmt"

	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/platform"
)

// limit is the SO_SNDBUF limit the pair works to: the one in its facts
// (tests hand in any kernel's, an XNU double's among them), else this
// machine's, probed once.
func (p *Pair) limit() platform.Limit {
	if p.facts.SndbufLimit.Known() {
		return p.facts.SndbufLimit
	}
	return platform.NativeLimit()
}

// refusal is the error for a buffer request the kernel would refuse
// outright (macOS before 14.4: ENOBUFS above kern.ipc.maxsockbuf ×
// 2048/2304), with the exact fix. It is checked before anything is sent
// to a child, so a refused change leaves the side as it was.
func refusal(l platform.Limit, sideName, setting string, which nbd.SockBuf, req int) error {
	c, refused := l.Refuses(which, req)
	if !refused {
		return nil
	}
	return fmt.Errorf("side %s %s %s: above this kernel's limit of %s (%s %s), setsockopt would fail with ENOBUFS; largest allowed: %s. Fix: %s (persist: %q in %s)",
		sideName, setting, platform.HumanSize(req), platform.HumanSize(c.MaxRequest), c.Limit,
		platform.HumanSize(l.SysctlValue), platform.HumanSize(c.MaxRequest), c.Fix, c.Persist, c.Where)
}

// checkRefusals checks every buffer setting of every side of cfg.
func checkRefusals(l platform.Limit, cfg model.Config) error {
	for _, sc := range cfg.Sides {
		for _, st := range model.BufferSettings() {
			if err := refusal(l, sc.Name, st.Name, st.Socket, model.BufRequest(sc.Value(st).Buf)); err != nil {
				return err
			}
		}
	}
	return nil
}

// refusedChange checks a live change of a buffer setting.
func (p *Pair) refusedChange(sc model.SideConfig, st *model.Setting) error {
	if st.Type != model.TypeBuf {
		return nil
	}
	return refusal(p.limit(), sc.Name, st.Name, st.Socket, model.BufRequest(sc.Value(st).Buf))
}
