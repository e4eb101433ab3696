package syscount

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"nbdscope/internal/testbin"
)

// The test binary re-executes itself as the process to count, selected by
// this variable (see TestMain): "io" runs the known pattern of socket I/O
// (ioHelper), "probe" prints what Probe says (probeHelper).
const helperEnv = "NBDSCOPE_SYSCOUNT_HELPER"

// TestMain runs the helper roles when the tests start the binary as one.
func TestMain(m *testing.M) {
	testbin.Roles(m, helperEnv, map[string]func() int{"io": ioHelper, "probe": probeHelper, "fork": forkHelper, "writes": writesHelper})
}

// selfCount is what the helper counts of its own calls on its data fds.
type selfCount struct {
	Calls  [NumSyscalls]uint64
	EAGAIN [NumSyscalls]uint64
}

func (s *selfCount) add(o selfCount) {
	for i := range NumSyscalls {
		s.Calls[i] += o.Calls[i]
		s.EAGAIN[i] += o.EAGAIN[i]
	}
}

// ioHelper is the counted process. It makes socketpairs (non-blocking, a
// small send buffer so that sends fail with EAGAIN soon) and prints
// "PID fd,fd,…" (the data fds). On "go" from stdin, workers on threads
// of their own fill each pair with send calls until EAGAIN and drain it
// with receive calls until EAGAIN, rotating through every call counted
// and varying the size.
// Half the workers' threads exist before "go", half are started after it,
// and all of them exit when done (a locked goroutine that returns takes
// its thread with it), so threads appear and vanish while counted. Each
// round also reads an empty pipe (read, EAGAIN) and writes /dev/null
// (write) off the data fds, so that filtering by fd matters. It then
// prints "done JSON" (its own count of each pair's calls, by pair) and
// exits when stdin closes.
func ioHelper() int {
	workers, _ := strconv.Atoi(os.Getenv("HELPER_WORKERS"))
	rounds, _ := strconv.Atoi(os.Getenv("HELPER_ROUNDS"))
	pairs, noise, err := helperFDs(workers)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	var fds []string
	for _, p := range pairs {
		fds = append(fds, strconv.Itoa(p[0]), strconv.Itoa(p[1]))
	}
	fmt.Println(os.Getpid(), strings.Join(fds, ","))
	in := bufio.NewReader(os.Stdin)
	start := make(chan struct{})
	results := make(chan workerResult, workers)
	var ready sync.WaitGroup
	for i := range workers / 2 {
		ready.Add(1)
		go worker(i, pairs[i], noise, rounds, start, &ready, results)
	}
	ready.Wait() // their threads exist before "go"
	if _, err := in.ReadString('\n'); err != nil {
		return 1
	}
	close(start)
	for i := workers / 2; i < workers; i++ {
		ready.Add(1)
		go worker(i, pairs[i], noise, rounds, start, &ready, results)
	}
	byPair := make([]selfCount, workers)
	for range workers {
		r := <-results
		if r.err != nil {
			fmt.Println("error", r.err)
			return 1
		}
		byPair[r.pair] = r.count
	}
	js, _ := json.Marshal(byPair)
	fmt.Println("done", string(js))
	io.Copy(io.Discard, in)
	return 0
}

type workerResult struct {
	pair  int
	count selfCount
	err   error
}

// helperFDs makes the socketpairs, an empty non-blocking pipe's read end
// and /dev/null.
func helperFDs(n int) (pairs [][2]int, noise [2]int, err error) {
	for range n {
		p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, noise, err
		}
		if err := unix.SetsockoptInt(p[0], unix.SOL_SOCKET, unix.SO_SNDBUF, 4096); err != nil {
			return nil, noise, err
		}
		pairs = append(pairs, p)
	}
	var pipe [2]int
	if err := unix.Pipe2(pipe[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		return nil, noise, err
	}
	null, err := unix.Open("/dev/null", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	return pairs, [2]int{pipe[0], null}, err
}

// worker runs the rounds on one pair, on a thread of its own that it
// never gives back (so the thread exits with it).
func worker(i int, pair [2]int, noise [2]int, rounds int, start chan struct{}, ready *sync.WaitGroup, out chan<- workerResult) {
	runtime.LockOSThread()
	ready.Done()
	<-start
	var c selfCount
	full := make([]byte, 2048)
	k := 0
	for r := range rounds {
		// Sizes that vary by round, so that EAGAIN falls on every call in
		// turn, not always on the fifth.
		buf := full[:200+(r*397)%1800]
		for _, dir := range []struct {
			fd  int
			ops []Syscall
		}{{pair[0], []Syscall{Write, Writev, Sendto, Sendmsg, Sendmmsg}}, {pair[1], []Syscall{Read, Readv, Recvfrom, Recvmsg, Recvmmsg}}} {
			for {
				s := dir.ops[k%len(dir.ops)]
				k++
				c.Calls[s]++
				err := call(s, dir.fd, buf)
				if errors.Is(err, unix.EAGAIN) {
					c.EAGAIN[s]++
					break
				}
				if err != nil {
					out <- workerResult{err: fmt.Errorf("%s: %w", s, err)}
					return
				}
			}
		}
		unix.Read(noise[0], buf) // EAGAIN: the pipe is empty
		unix.Write(noise[1], buf[:1])
	}
	out <- workerResult{pair: i, count: c}
}

// call makes exactly one system call s on fd with buf.
func call(s Syscall, fd int, buf []byte) error {
	var err error
	switch s {
	case Read:
		_, err = unix.Read(fd, buf)
	case Readv:
		_, err = unix.Readv(fd, [][]byte{buf})
	case Recvfrom:
		_, _, err = unix.Recvfrom(fd, buf, 0)
	case Recvmsg:
		_, _, _, _, err = unix.Recvmsg(fd, buf, nil, 0)
	case Write:
		_, err = unix.Write(fd, buf)
	case Writev:
		_, err = unix.Writev(fd, [][]byte{buf})
	case Sendto:
		err = unix.Sendto(fd, buf, 0, nil)
	case Sendmsg:
		_, err = unix.SendmsgN(fd, buf, nil, nil, 0)
	case Recvmmsg, Sendmmsg:
		err = mmsg(s, fd, buf)
	}
	return err
}

// mmsghdr is struct mmsghdr: one message and its length.
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// mmsg makes one recvmmsg or sendmmsg call of one message.
func mmsg(s Syscall, fd int, buf []byte) error {
	iov := unix.Iovec{Base: &buf[0]}
	iov.SetLen(len(buf))
	m := mmsghdr{hdr: unix.Msghdr{Iov: &iov, Iovlen: 1}}
	nr := uintptr(unix.SYS_SENDMMSG)
	if s == Recvmmsg {
		nr = unix.SYS_RECVMMSG
	}
	_, _, e := unix.Syscall6(nr, uintptr(fd), uintptr(unsafe.Pointer(&m)), 1, 0, 0, 0)
	runtime.KeepAlive(buf)
	if e != 0 {
		return e
	}
	return nil
}

// probeHelper prints the reason Probe gives ("ok" when none), then, given
// HELPER_TARGET, the reason opening a counter on that process gives.
func probeHelper() int {
	fmt.Println(reasonOf(Probe()))
	if pid, err := strconv.Atoi(os.Getenv("HELPER_TARGET")); err == nil {
		c, err := Open(pid, Options{AllFDs: true})
		if err == nil {
			c.Close()
		}
		fmt.Println(reasonOf(err))
	}
	fmt.Printf("bpf\t%s\n", WhyNotPerProcess())
	return 0
}

// reasonOf is the line a helper prints of err for the test to parse.
func reasonOf(err error) string {
	if err == nil {
		return "ok"
	}
	if u, ok := errors.AsType[*Unavailable](err); ok {
		return u.Reason.String() + "\t" + u.Fix + "\t" + u.Error()
	}
	return "error\t\t" + err.Error()
}
