// Command copyloop is the ceiling of bench/compare.sh: a bare unix-socket
// copy with nothing else. A writer process sends CHUNK-sized write(2)s and a
// reader (this process) reads them over CONNS connections (socketpairs), a
// goroutine per socket on each side. No protocol, no copies: what any NBD
// pair could do at best with the same send buffer and the same 2 MiB reads.
// The reader and the writer are held to cores as nbdscope's pair holds its
// load process and server (-placement split, shared or os; default split).
//
// Like for like with an NBD client, the reader fills -bufs buffers per
// connection in turn (default 8: nbdscope's 8 requests in flight, and
// qemu-img's 8 × 2 MiB), so its data does not stay in one cache-hot
// buffer, and it reads the way the client does (-reader): poll, the
// default, reads a non-blocking socket and on EAGAIN waits for it to be
// readable and reads again, through Go's netpoller (epoll), as nbdscope's
// client does and as qemu-img's coroutines do through its main loop;
// block makes blocking read(2)s. -bufs 1 -reader block is the one hot
// buffer loop: an upper bound, not a like-for-like ceiling.
//
//	go run ./bench/copyloop -bytes 4g -conns 1 -sndbuf 2m
//	go run ./bench/copyloop -bytes 4g -bufs 1 -reader block   # the upper bound
//
// It prints one JSON object: seconds from the start signal until the reader
// has every byte, the read/write calls each side made (counted at the call;
// the reader's EAGAIN returns apart) and each process's getrusage (CPU over
// the copy, peak RSS).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
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
	"nbdscope/nbd"
	"nbdscope/platform"
	"nbdscope/units"
)

type side struct {
	Calls          uint64  `json:"calls"`  // read(2) or write(2) calls, EINTR included, EAGAIN not
	EAGAIN         uint64  `json:"eagain"` // reads that found nothing (-reader poll)
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
	ReaderBuffers   int     `json:"reader_buffers"`   // in all: bufs × conns
	ReaderMode      string  `json:"reader_mode"`      // poll or block
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

// hdr is -hdr: the bytes of header framing each chunk (0: none).
var hdr int

// pages is -pages: what backs the reader's buffers and the writer's.
var pages = pagesHuge

// The backings -pages names. huge is the pair's: its load (consume none)
// reads into nbd.MakePayload's buffers and its server sends from them,
// both advised MADV_HUGEPAGE; a copy into huge pages runs a few percent
// faster than into 4 KiB ones (fewer TLB misses), and with THP in
// "madvise" mode a plain make([]byte) gets none, so a loop on small
// pages was not the fastest honest bare loop: at 2m it made 5.2-7.5
// GiB/s in one compare.sh run, with 8-11 reads per 2 MiB.
const (
	pagesHuge  = "huge"
	pagesSmall = "small"
)

// payload is a buffer of n bytes backed as -pages says.
func payload(n int) []byte {
	if pages == pagesSmall {
		return nbd.MakeSmallPagePayload(n)
	}
	return nbd.MakePayload(n)
}

// Reader modes (-reader).
const (
	readPoll  = "poll"
	readBlock = "block"
)

func main() {
	var (
		bytesS = flag.String("bytes", "4g", "total `SIZE` to copy, split evenly over the connections")
		conns  = flag.Int("conns", 1, "connections (socketpairs)")
		sndbuf = flag.String("sndbuf", "default", "writer SO_SNDBUF: default or a `SIZE` (Linux doubles it)")
		chunkS = flag.String("chunk", "2m", "write and read `SIZE`")
		nbufs  = flag.Int("bufs", 8, "reader: fill `N` buffers per connection in turn, as N requests in flight do (8: nbdscope's in flight, qemu-img's 8 × 2 MiB; 1: one hot buffer)")
		mode   = flag.String("reader", readPoll, "reader `MODE`: poll (non-blocking reads, waiting on EAGAIN in Go's netpoller, as nbdscope's client and qemu-img read) or block (blocking read(2))")
		place  = flag.String("placement", "", "split (writer and reader on cores of their own), shared (one core) or os (the scheduler decides); default as nbdscope's pair")
		pagesF = flag.String("pages", pagesHuge, "what backs the buffers: huge (transparent huge pages, advised, as the pair's are) or small (4 KiB pages, as qemu-img's are)")
		hdrN   = flag.Int("hdr", 0, "frame each chunk as NBD does: the writer sends an `N`-byte header and the chunk in one writev, the reader reads the header apart (0: no header; 28 is a structured reply's)")
		writer = flag.Bool("writer", false, "internal: be the writer (sockets on fd 3…)")
		human  = flag.Bool("h", false, "print a line of text instead of JSON")
	)
	flag.Parse()
	total, err := units.ParseSize(*bytesS)
	check(err)
	chunk, err := units.ParseSize(*chunkS)
	check(err)
	if *conns < 1 || chunk <= 0 || total < chunk || *nbufs < 1 {
		check(fmt.Errorf("want -conns ≥ 1, -bufs ≥ 1 and -bytes ≥ -chunk > 0"))
	}
	if *mode != readPoll && *mode != readBlock {
		check(fmt.Errorf("-reader %q: want poll or block", *mode))
	}
	per := uint64(total) / uint64(*conns)
	per -= per % uint64(chunk)
	if *hdrN < 0 || *hdrN > 4096 {
		check(fmt.Errorf("-hdr %d: want 0…4096", *hdrN))
	}
	hdr = *hdrN
	if *pagesF != pagesHuge && *pagesF != pagesSmall {
		check(fmt.Errorf("-pages %q: want huge or small", *pagesF))
	}
	pages = *pagesF
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
		*place = string(model.DefaultPlacement())
	}
	r := runReader(*conns, per, int(chunk), sb, *nbufs, *mode, *place)
	if *human {
		fmt.Printf("%.2f GiB/s  %.3f s  reader (%s, %d buffers) %.2f reads/2MiB %.2f EAGAIN/2MiB %.3f s/GiB  writer %.2f writes/2MiB %.3f s/GiB  sndbuf %d\n",
			r.GiBps, r.Seconds, r.ReaderMode, r.ReaderBuffers, r.Reader.CallsPer2MiB, float64(r.Reader.EAGAIN)/(float64(r.Bytes)/unit),
			r.Reader.CPUSPerGiB, r.Writer.CallsPer2MiB, r.Writer.CPUSPerGiB, r.SndBufEffective)
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
	buf := payload(chunk)
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
				if hdr > 0 {
					calls.Add(writeFramed(fd, make([]byte, hdr), p))
					n += uint64(len(p))
					continue
				}
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

// writeFramed writes h and p whole, in one writev(2) where the socket
// takes them (blocking), and returns the calls it made.
func writeFramed(fd int, h, p []byte) uint64 {
	var calls uint64
	vecs := [][]byte{h, p}
	for len(vecs) > 0 {
		k, err := unix.Writev(fd, vecs)
		calls++
		if err == unix.EINTR {
			continue
		}
		check(err)
		for k > 0 {
			if k >= len(vecs[0]) {
				k -= len(vecs[0])
				vecs = vecs[1:]
			} else {
				vecs[0] = vecs[0][k:]
				k = 0
			}
		}
		for len(vecs) > 0 && len(vecs[0]) == 0 {
			vecs = vecs[1:]
		}
	}
	return calls
}

// runReader copies per bytes over each of conns socket pairs from a
// writer child, reading into nbufs buffers of chunk bytes a connection in
// turn, the way mode says, and measures both sides.
func runReader(conns int, per uint64, chunk, sndbuf, nbufs int, mode, placement string) result {
	res := result{Bytes: per * uint64(conns), Conns: conns, Chunk: chunk, Bufs: nbufs, ReaderBuffers: nbufs * conns,
		ReaderMode: mode, SndBufRequested: sndbuf, Placement: placement}
	mine, theirs, eff := socketPairs(conns, sndbuf)
	res.SndBufEffective = eff
	exe, err := os.Executable()
	check(err)
	cmd := exec.Command(exe, "-writer", "-conns", strconv.Itoa(conns), "-hdr", strconv.Itoa(hdr), "-pages", pages,
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
	rcpus, wcpus := model.PlacementCPUs(model.Place(placement), model.ModeAlternate, 0, platform.AllowedCPUs())
	check(platform.PinProcess(os.Getpid(), rcpus))
	check(platform.PinProcess(cmd.Process.Pid, wcpus))
	res.ReaderCPUs, res.WriterCPUs = fmt.Sprint(rcpus), fmt.Sprint(wcpus)
	bufs := readBuffers(conns, nbufs, chunk)
	u0, s0, _ := rusage()
	t0 := time.Now()
	_, err = stdin.Write([]byte{'g'})
	check(err)
	rd := readAll(mine, bufs, chunk, mode)
	res.Seconds = time.Since(t0).Seconds()
	got := rd.got
	res.Reader.Calls, res.Reader.EAGAIN = rd.calls, rd.eagain
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
			b := payload(chunk)
			for j := range b {
				b[j] = 1
			}
			bufs[i] = append(bufs[i], b)
		}
	}
	return bufs
}

// readCounts are what the reader's goroutines counted.
type readCounts struct{ calls, eagain, got uint64 }

// readAll reads each socket to its end, a goroutine each, filling the
// socket's buffers one after another as a client with len(bufs[i])
// requests in flight does, and returns the reads made, the EAGAIN returns
// (mode poll) and the bytes read.
func readAll(fds []int, bufs [][][]byte, chunk int, mode string) readCounts {
	var ncalls, neagain, ngot atomic.Uint64
	var wg sync.WaitGroup
	for i, fd := range fds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			read := blockingReader(fd)
			if mode == readPoll {
				var done func()
				read, done = pollingReader(fd, &neagain)
				defer done()
			}
			mine, k, off := bufs[i], 0, 0
			h, hoff := make([]byte, hdr), 0 // the next chunk's header, hoff of it read
			for {
				dst := mine[k][off:]
				if hoff < hdr {
					dst = h[hoff:]
				}
				n, err := read(dst)
				ncalls.Add(1)
				if err == unix.EINTR {
					continue
				}
				check(err)
				if n == 0 {
					return
				}
				if hoff < hdr {
					hoff += n
					continue
				}
				ngot.Add(uint64(n))
				if off += n; off == chunk {
					k, off, hoff = (k+1)%len(mine), 0, 0
				}
			}
		}()
	}
	wg.Wait()
	return readCounts{ncalls.Load(), neagain.Load(), ngot.Load()}
}

// blockingReader reads fd with blocking read(2)s.
func blockingReader(fd int) func([]byte) (int, error) {
	return func(p []byte) (int, error) { return unix.Read(fd, p) }
}

// pollingReader reads fd as nbdscope's client reads its socket: fd made
// non-blocking and handed to Go's netpoller, each read(2) made through
// syscall.RawConn, and on EAGAIN (counted) the goroutine parked until
// epoll says the socket is readable, then read again. qemu-img's
// coroutines do the same through its main loop. read returns one read
// that found data, the end or an error. It takes fd over: done closes it.
func pollingReader(fd int, eagain *atomic.Uint64) (read func([]byte) (int, error), done func()) {
	f := os.NewFile(uintptr(fd), "reader")
	nc, err := net.FileConn(f) // a non-blocking dup in the netpoller
	check(err)
	f.Close()
	sc, ok := nc.(syscall.Conn)
	if !ok {
		check(fmt.Errorf("%T has no file descriptor", nc))
	}
	raw, err := sc.SyscallConn()
	check(err)
	var buf []byte
	var n int
	var rerr error
	once := func(fd uintptr) bool { // built once: a read allocates nothing
		n, rerr = unix.Read(int(fd), buf)
		if rerr == unix.EAGAIN {
			eagain.Add(1)
			return false // wait in the poller, then be called again
		}
		return true
	}
	read = func(p []byte) (int, error) {
		buf = p
		if err := raw.Read(once); err != nil {
			return 0, err
		}
		return n, rerr
	}
	return read, func() { nc.Close() }
}
