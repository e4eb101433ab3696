package interop

import (
	"testing"

	"nbdscope/model"
)

// TestExecClientSndBufLive: on an exec side writing (qemu-img convert to
// our server: the client sends the bulk data), the buffer keys' setting,
// client-sndbuf, changes qemu-img's own data socket from outside: an
// independent getsockopt on a copy of qemu-img's socket reads twice the
// request, the event has it read back and the sockets it reached, later
// runs of the client get it too, and default gives the socket its own
// value back.
func TestExecClientSndBufLive(t *testing.T) {
	need(t, "qemu-img")
	const size = "1073740800" // 1 GiB - 1 KiB: marks this test's qemu-img
	client := `qemu-img convert -f raw -O raw -W -n -S 0 'json:{"file":{"driver":"null-co","size":` + size + `}}' {uri}`
	rep, r, seen, last := runWatching(t, `"size":`+size, anySocket(func(b sockBufs) bool { return b.snd == 2<<20 }),
		"--exec-b", client, "--size-b", "1g", "--workload-b", "write",
		"--mode", "concurrent", "--at", "2s:b.client-sndbuf=1m", "--at", "4s:b.client-sndbuf=default", "--duration", "5s")
	if !seen {
		t.Errorf("qemu-img's data socket never had SO_SNDBUF 2m (the 1m request) on its own socket; last look: %+v\n%s", last, r)
	}
	set, back := setAndBack(rep, model.SetClientSndBuf, "1m")
	if set == nil || set.Reached == nil || (*set.Reached > 0 && set.Effective != 2<<20) {
		t.Fatalf("want B's client-sndbuf event with the sockets it reached and 2m read back: %+v\n%s", set, r)
	}
	own := rep.Sides[1].Summary.SndBuf.ClientOwn
	if back == nil || own <= 0 || (back.Reached != nil && *back.Reached > 0 && back.Effective != own) {
		t.Errorf("default should give qemu-img's socket its own send buffer %d back: %+v", own, back)
	}
	t.Logf("set: %d socket(s), %d read back; default: %+v, own %d", *set.Reached, set.Effective, back, own)
}
