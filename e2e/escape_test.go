package e2e

import (
	"syscall"
	"testing"
	"time"

	"nbdscope/internal/testbin"
	"nbdscope/shellword"
)

// reapSeen is how long after a job's escape it is known to have been seen
// by the walk (every 100 ms), with room for a loaded machine: an escape
// within one walk of a kill -9 can be missed (docs/cli.md).
const reapSeen = 500 * time.Millisecond

// A real client whose job leaves its process group (setsid) is out of
// reach of the group's kill and of the janitor: nbdscope's process that
// started the client is its subreaper and kills it (clientrun's reaper).
// Before it, the job ran on under PID 1 after every one of these.

// escapingClient is a client with a job in a session of its own, the
// marked sleep, and a marked sleep in its own group keeping it running.
func (lt lifetime) escapingClient() string {
	s := shellword.Quote(lt.sleep)
	return "sh -c " + shellword.Quote("setsid "+s+" 1000 & "+s+" 1000") + " {uri}"
}

// escapedSleeps says whether two marked sleeps run: the client's own and
// its escaped job.
func (lt lifetime) escapedSleeps() bool {
	n := 0
	for _, p := range testbin.ProcsWith(lt.marker) {
		if p.Argv[0] == lt.sleep {
			n++
		}
	}
	return n == 2
}

// TestEscapedExecJobEndsWithRun: a live --exec client's setsid job is
// gone after the run's normal end and after kill -9 of nbdscope.
func TestEscapedExecJobEndsWithRun(t *testing.T) {
	for _, kill := range []bool{false, true} {
		name := map[bool]string{false: "normal end", true: "kill -9"}[kill]
		t.Run(name, func(t *testing.T) {
			lt := newLifetime(t)
			p := lt.start(t, "run", "-t", "3", "--exec-b", lt.escapingClient())
			p.waitFor(t, "the client and its escaped job", lt.escapedSleeps)
			time.Sleep(reapSeen)
			if kill {
				syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
			}
			p.wait(t)
			lt.checkNothingLeft(t, "run --exec-b with a setsid job, "+name)
		})
	}
}

// TestEscapedSweepJobAfterKill9: the same for a sweep's client, whose
// starter is nbdscope itself, killed outright.
func TestEscapedSweepJobAfterKill9(t *testing.T) {
	lt := newLifetime(t)
	s := shellword.Quote(lt.sleep)
	client := "setsid " + s + " 1000 & " + s + " 1000; : {uri}"
	p := lt.start(t, "sweep", "--shell", "--exec", client, "--sndbuf", "default", "--repeat", "1", "--warmup", "0", "--bytes", "64m")
	p.waitFor(t, "the client and its escaped job", lt.escapedSleeps)
	time.Sleep(reapSeen)
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
	p.wait(t)
	lt.checkNothingLeft(t, "sweep --exec with a setsid job after kill -9")
}
