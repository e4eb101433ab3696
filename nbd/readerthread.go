package nbd

import "runtime"

// How the ppoll reader's goroutine keeps the runtime asleep.
//
// qemu's reader is a thread of its own that the kernel alone schedules.
// A goroutine's thread is also the runtime's: its monitor thread (sysmon)
// preempts a goroutine that has run 10 ms without passing through the
// scheduler, and the ppoll reader never passes through it, since it never
// parks: its receive calls are raw and its ppoll returns to the same
// processor. Each such preemption (SIGURG) of a reader locked to its
// thread handed the processor to another thread and back (a locked
// goroutine is rescheduled only on its own thread), and, when it caught
// the reader in ppoll, took the processor from the call; a processor
// taken from a call resets sysmon to waking every 20 µs, in which it
// takes the processor from every ppoll that outlasts one of its sleeps,
// and so on. In a load child (one processor: it is pinned to one core)
// reading 2 MiB requests at the default buffer, per-thread
// /proc/PID/task/*/status counts gave sysmon's thread 1360-1850
// switches a second and the reader 850-1200 involuntary ones (sysmon
// running on its core), about 0.8 of the load's 2.7 wake-ups per
// request.
//
// With one processor the reader is therefore not locked, and yields to
// the scheduler after each reply (runtime.Gosched): the runtime sees the
// goroutine scheduled anew, never preempts it, and sysmon, finding
// nothing to retake, backs off to one wake-up per 10 ms. A yield with
// nothing else runnable puts the goroutine back on the same thread at
// once: no thread switch, no system call. With more processors a yield
// would wake an idle processor's thread to look for work, so there the
// reader keeps its own locked thread and waits through the runtime, as
// before.
//
// A paused load has its processor idle, so sysmon sleeps deeply, and a
// system call made through the runtime's syscall entry, or one ending on
// a processor sysmon had taken, wakes it into its 20 µs ticks: at least
// 50 of them, then doublings up to 10 ms, some 60 wake-ups on the load's
// core after each resume, 0.2-0.25 per 2 MiB of calibrate's 1 GiB
// measurements. On one processor the reader therefore makes none: it
// waits for the socket first in a raw ppoll, which holds the processor
// and which the runtime does not see (Conn.waitReadable, at most 1 ms),
// and with nothing in flight it parks on the client's condition variable,
// not in ppoll, until a request is sent (Client.awaitRequest). Four
// resumes of a load of 2 MiB requests, 64 requests each: the threads
// other than the reader's switched 1.6 times a request before, 0.05
// after (TestResumeLeavesTheRuntimeAsleep).

// readerThread is the ppoll reader's hold on its thread.
type readerThread struct {
	locked bool
	c      *Conn
}

// betweenReplies is called by the ppoll reader before each reply.
func (t *readerThread) betweenReplies() {
	if runtime.GOMAXPROCS(0) == 1 {
		if t.locked {
			runtime.UnlockOSThread()
			t.locked = false
		}
		t.c.rawWait = true
		runtime.Gosched()
		return
	}
	t.c.rawWait = false
	if !t.locked {
		runtime.LockOSThread()
		t.locked = true
	}
}

// release gives the thread back when the reader ends.
func (t *readerThread) release() {
	if t.locked {
		runtime.UnlockOSThread()
		t.locked = false
	}
}
