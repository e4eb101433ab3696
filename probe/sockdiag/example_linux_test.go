//go:build linux

package sockdiag_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/probe/sockdiag"
)

// A process's connections: who talks to whom. Here the two ends are both
// this process's; for a client and a server, pass TreeSockets(client) and
// TreeSockets(server) through Describe and join the two with Links.
func ExampleLinks() {
	pair, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])

	fds, err := sockdiag.ProcessSockets(os.Getpid())
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := sockdiag.Dial()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	socks, err := c.Describe(fds)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range sockdiag.Links(socks, socks) {
		if l.A.Holders[0].FD == pair[0] && l.B.Holders[0].FD == pair[1] {
			fmt.Println("fd", "↔", "fd", l.A.Kind)
		}
	}
	// Output: fd ↔ fd unix
}

// How full a sender's buffer is: a writer whose reader does not read.
func ExampleStartSampler() {
	pair, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	for { // fill it: nobody reads pair[1]
		if _, err := unix.Write(pair[0], make([]byte, 4096)); err != nil {
			break
		}
	}
	var st unix.Stat_t
	unix.Fstat(pair[0], &st)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := sockdiag.StartSampler(ctx, sockdiag.SamplerConfig{}) // 200 Hz
	if err != nil {
		fmt.Println(err) // on macOS: socket fill n/a: needs Linux sock_diag; …
		return
	}
	defer s.Stop()
	s.Set("server", []sockdiag.Inode{sockdiag.Inode(st.Ino)})
	var f sockdiag.Fill
	for !f.OK() && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		f = s.Take("server") // a window per sample interval of the caller
	}
	fmt.Printf("full %.0f%% of the time, empty %.0f%%\n", f.FullPct, f.EmptyPct)
	// Output: full 100% of the time, empty 0%
}
