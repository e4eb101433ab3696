// Command copyloop is the ceiling of bench/compare.sh: a bare unix-socket
// copy with nothing else. A writer process sends CHUNK-sized write(2)s and a
// reader (this process) reads into a CHUNK-sized buffer, over CONNS
// connections (socketpairs), one blocking goroutine per socket on each side.
// No protocol, no poller, no copies: what any NBD pair could do at best with
// the same send buffer and the same 2 MiB reads. The reader and the writer
// are held to cores as nbdscope's pair holds its load process and server
// (-placement split, shared or os; default split).
//
//	go run ./bench/copyloop -bytes 4g -conns 1 -sndbuf 2m
//
// It prints one JSON object: seconds from the start signal until the reader
// has every byte, the read/write calls each side made (counted at the call)
// and each process's getrusage (CPU over the copy, peak RSS).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"nbdscope/model"
	"nbdscope/platform"
	"nbdscope/units"
)

type side struct {
	Calls          uint64  `json:"calls"` // read(2) or write(2) calls, EINTR included
	CallsPer2MiB   float64 `json:"calls_per_2mib"`
	UserS          float64 `json:"user_s"` // over the copy only
	SysS           float64 `json:"sys_s"`
	CPUSPerGiB     float64 `json:"cpu_s_per_gib"`
	MaxRSSKiB      int64   `json:"maxrss_kib"` // getrusage ru_maxrss (peak over the process's life)
	PeakVmHWMKiB   int64   `json:"vmhwm_kib"`  // /proc/self/status VmHWM at the end
	BytesTransfers uint64  `json:"bytes"`
}

type result struct {
	Bytes           uint64  `json:"bytes"`
	Conns           int     `json:"conns"`
	Chunk           int     `json:"chunk"`
	Bufs            int     `json:"bufs"`             // reader buffers per connection, used in turn
	SndBufRequested int     `json:"sndbuf_requested"` // 0 = OS default
	SndBufEffective int     `json:"sndbuf_effective"`
	Placement       string  `json:"placement"`
	ReaderCPUs      string  `json:"reader_cpus"` // [] = not held
	WriterCPUs      string  `json:"writer_cpus"`
	Seconds         float64 `json:"seconds"`
	GiBps           float64 `json:"gib_per_s"`
	Reader          side    `json:"reader"`
	Writer          side    `json:"writer"`
}

const unit = 2 << 20

func main() {
	var (
		bytesS = flag.String("bytes", "4g", "total `SIZE` to copy, split evenly over the connections")
		conns  = flag.Int("conns", 1, "connections (socketpairs)")
		sndbuf = flag.String("sndbuf", "default", "writer SO_SNDBUF: default or a `SIZE` (Linux doubles it)")
		chunkS = flag.String("chunk", "2m", "write and read `SIZE`")
		nbufs  = flag.Int("bufs", 1, "reader: rotate reads over `N` buffers per connection, as N requests in flight would (1: one hot buffer)")
		place  = flag.String("placement", "", "split (writer and reader on cores of their own), shared (one core) or os (the scheduler decides); default as nbdscope's pair")
		writer = flag.Bool("writer", false, "internal: be the writer (sockets on fd 3…)")
		human  = flag.Bool("h", false, "print a line of text instead of JSON")
	)
	flag.Parse()
	total, err := units.ParseSize(*bytesS)
	check(err)
	chunk, err := units.ParseSize(*chunkS)
	check(err)
	if *conns < 1 || chunk <= 0 || total < chunk {
		check(fmt.Errorf("want -conns ≥ 1 and -bytes ≥ -chunk > 0"))
	}
	per := uint64(total) / uint64(*conns)
	per -= per % uint64(chunk)
	if *writer {
		runWriter(*conns, per, int(chunk))
		return
	}
	sb := 0
	if *sndbuf != "default" && *sndbuf != "" {
		n, err := units.ParseSize(*sndbuf)
		check(err)
		sb = int(n)
	}
	if *place == "" {
		*place = model.DefaultPlacement()
	}
	r := runReader(*conns, per, int(chunk), sb, max(*nbufs, 1), *place)
	if *human {
		fmt.Printf("%.2f GiB/s  %.3f s  reader %.2f reads/2MiB %.3f s/GiB  writer %.2f writes/2MiB %.3f s/GiB  sndbuf %d\n",
			r.GiBps, r.Seconds, r.Reader.CallsPer2MiB, r.Reader.CPUSPerGiB, r.Writer.CallsPer2MiB, r.Writer.CPUSPerGiB, r.SndBufEffective)
		return
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "copyloop:", err)
		os.Exit(1)
	}
}

func rusage() (user, sys float64, maxrss int64) {
	var ru unix.Rusage
	check(unix.Getrusage(unix.RUSAGE_SELF, &ru))
	tv := func(t unix.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime), tv(ru.Stime), int64(ru.Maxrss)
}

func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func finish(s *side, bytes uint64, u0, s0 float64) {
	u1, s1, rss := rusage()
	s.UserS, s.SysS, s.MaxRSSKiB = u1-u0, s1-s0, rss
	s.PeakVmHWMKiB = vmHWM()
	s.BytesTransfers = bytes
	if bytes > 0 {
		s.CallsPer2MiB = float64(s.Calls) / (float64(bytes) / unit)
		s.CPUSPerGiB = (s.UserS + s.SysS) / (float64(bytes) / (1 << 30))
	}
}

// runWriter writes per bytes on each inherited socket once stdin says go,
// then prints its side as JSON on stdout.
func runWriter(conns int, per uint64, chunk int) {
	buf := make([]byte, chunk)
	for i := range buf {
		buf[i] = 0xff
	}
	var go1 [1]byte
	_, err := io.ReadFull(os.Stdin, go1[:])
	check(err)
	u0, s0, _ := rusage()
	var calls atomic.Uint64
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		fd := 3 + i
		check(unix.SetNonblock(fd, false))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n uint64
			for n < per {
				p := buf[:min(uint64(chunk), per-n)]
				for len(p) > 0 {
					k, err := unix.Write(fd, p)
					calls.Add(1)
					if err == unix.EINTR {
						continue
					}
					check(err)
					p = p[k:]
					n += uint64(k)
				}
			}
			unix.Close(fd)
		}()
	}
	wg.Wait()
	s := side{Calls: calls.Load()}
	finish(&s, per*uint64(conns), u0, s0)
	b, _ := json.Marshal(s)
	fmt.Println(string(b))
}

// runReader copies per bytes over each of conns socket pairs from a
// writer child, reading into nbufs buffers of chunk bytes a connection,
// and measures both sides.
func runReader(conns int, per uint64, chunk, sndbuf, nbufs int, placement string) result {
	res := result{Bytes: per * uint64(conns), Conns: conns, Chunk: chunk, Bufs: nbufs, SndBufRequested: sndbuf, Placement: placement}
	mine, theirs, eff := socketPairs(conns, sndbuf)
	res.SndBufEffective = eff
	exe, err := os.Executable()
	check(err)
	cmd := exec.Command(exe, "-writer", "-conns", strconv.Itoa(conns),
		"-bytes", strconv.FormatUint(res.Bytes, 10), "-chunk", strconv.Itoa(chunk))
	cmd.ExtraFiles = theirs
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	check(err)
	var out strings.Builder
	cmd.Stdout = &out
	check(cmd.Start())
	for _, f := range theirs {
		f.Close()
	}
	// Held to cores exactly as the pair holds its load process (the
	// reader) and server (the writer).
	rcpus, wcpus := model.PlacementCPUs(placement, model.ModeAlternate, 0, platform.AllowedCPUs())
	check(platform.PinProcess(os.Getpid(), rcpus))
	check(platform.PinProcess(cmd.Process.Pid, wcpus))
	res.ReaderCPUs, res.WriterCPUs = fmt.Sprint(rcpus), fmt.Sprint(wcpus)
	bufs := readBuffers(conns, nbufs, chunk)
	u0, s0, _ := rusage()
	t0 := time.Now()
	_, err = stdin.Write([]byte{'g'})
	check(err)
	calls, got := readAll(mine, bufs, chunk)
	res.Seconds = time.Since(t0).Seconds()
	res.Reader.Calls = calls
	finish(&res.Reader, got, u0, s0)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		check(fmt.Errorf("writer: %v", err))
	}
	check(json.Unmarshal([]byte(out.String()), &res.Writer))
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.Writer.MaxRSSKiB = ru.Maxrss
	}
	if got != res.Bytes {
		check(fmt.Errorf("read %d bytes, want %d", got, res.Bytes))
	}
	res.GiBps = float64(res.Bytes) / res.Seconds / (1 << 30)
	return res
}

// socketPairs makes conns unix stream pairs: the reader's ends, the
// writer's ends (as files for the child) with SO_SNDBUF set to sndbuf
// (0: the default), and the effective send buffer.
func socketPairs(conns, sndbuf int) (mine []int, theirs []*os.File, eff int) {
	for i := 0; i < conns; i++ {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		check(err)
		unix.CloseOnExec(fds[0])
		unix.CloseOnExec(fds[1])
		if sndbuf > 0 {
			check(unix.SetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_SNDBUF, sndbuf))
		}
		eff, err = unix.GetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_SNDBUF)
		check(err)
		mine = append(mine, fds[0])
		theirs = append(theirs, os.NewFile(uintptr(fds[1]), "writer"))
	}
	return mine, theirs, eff
}

// readBuffers are nbufs buffers of chunk bytes for each connection,
// touched so that page faults are not part of the copy.
func readBuffers(conns, nbufs, chunk int) [][][]byte {
	bufs := make([][][]byte, conns)
	for i := range bufs {
		for k := 0; k < nbufs; k++ {
			b := make([]byte, chunk)
			for j := range b {
				b[j] = 1
			}
			bufs[i] = append(bufs[i], b)
		}
	}
	return bufs
}

// readAll reads each socket to its end, a goroutine each, and returns the
// read calls made and the bytes read.
func readAll(fds []int, bufs [][][]byte, chunk int) (calls, got uint64) {
	var ncalls, ngot atomic.Uint64
	var wg sync.WaitGroup
	for i, fd := range fds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Fill one buffer, then the next: what a client with
			// len(bufs[i]) requests in flight does.
			mine, k, off := bufs[i], 0, 0
			for {
				n, err := unix.Read(fd, mine[k][off:])
				ncalls.Add(1)
				if err == unix.EINTR {
					continue
				}
				check(err)
				if n == 0 {
					return
				}
				ngot.Add(uint64(n))
				if off += n; off == chunk {
					k, off = (k+1)%len(mine), 0
				}
			}
		}()
	}
	wg.Wait()
	return ncalls.Load(), ngot.Load()
}
