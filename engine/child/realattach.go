package child

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/probe/realproc"
	"nbdscope/shellword"
)

// attachRealServerRole measures a server that is already running (the
// local process behind a --target, realproc.FindServer) as a real server
// side is measured: its socket calls counted from now, its CPU, wake-ups
// and faults, its data sockets and their buffers, polled every tickEvery
// by the same code. It is not started, held or stopped by us: closing the
// role stops looking, and its exit is the role's failure.
func attachRealServerRole(spec wire.ServerSpec) (role, wire.Msg, error) {
	pid := spec.AttachPID
	if !realproc.LeadsGroup(pid) {
		// Its process group's CPU would be other processes' too.
		return nil, wire.Msg{}, fmt.Errorf("the target's server (PID %d) does not lead its own process group: its CPU cannot be told from its group's; "+
			"start it with setsid (setsid qemu-nbd …) or from an interactive shell, which gives each job a group of its own", pid)
	}
	r := &realServerRole{pid: pid, argv: strings.Fields(cmdlineOf(pid)), fail: make(chan error, 1), exited: make(chan struct{}), stop: make(chan struct{})}
	if r.callsErr = realproc.Probe(); r.callsErr == nil {
		r.calls, r.callsErr = realproc.OpenCalls(pid)
	}
	var err error
	r.live, err = watchBufs(pid, wantBufs(spec), "the target's server")
	r.live.onlyPeersOf(0) // its other clients' sockets are not ours: only our load's, once named (OpPeer)
	ready := wire.Msg{URI: spec.Target, RealPID: pid}
	if err == nil {
		err = r.live.bufs.Err()
	}
	if err != nil {
		// Still measured; its buffers are its own (the side says why).
		ready.BufsNA = wire.ReasonOf(err)
	}
	r.wg.Add(2)
	go r.watchGone()
	go r.tick()
	return r, ready, nil
}

// watchGone stands for wait with a process that is not our child: it
// looks every tickEvery whether the process is still there.
func (r *realServerRole) watchGone() {
	defer r.wg.Done()
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			close(r.exited)
			return
		case <-t.C:
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(r.pid)); err != nil {
			close(r.exited)
			r.fail <- fmt.Errorf("real server: the target's server %s (PID %d) exited", shellword.Join(r.argv), r.pid)
			return
		}
	}
}

// cmdlineOf is pid's command line, arguments joined by spaces.
func cmdlineOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return "PID " + strconv.Itoa(pid)
	}
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}
