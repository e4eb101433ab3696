// Command countpair measures what counting a real process's system calls
// costs, run by run (issue 23, item 2): it starts a server, then runs a
// client against it again and again, each pair of runs one without
// counting and one counted by realproc.OpenCalls (the counting of
// `sweep --exec`, and with -count-server of a real server side), the
// order swapped every other pair so that a machine's drift falls on both.
// bench/countcost.sh measures the same through the exec sweep itself; this
// alternates every run (about a second apart instead of a sweep's ten), so
// the paired ratios are less exposed to the other tenants of a shared
// machine.
//
//	go run ./bench/countpair -server 'nbdscope serve -k {socket} --backend null --size {size} --sndbuf default' \
//	    -client "qemu-img convert -f raw -O raw -W -n {uri} 'json:{\"file\":{\"driver\":\"null-co\",\"size\":{size}}}'" -pairs 20
//
// The server runs on the second allowed CPU and the client on the first,
// as the sweep's split placement holds them. It prints, for each mode, the
// client's CPU s/GiB (user+sys, wait4) and GiB/s (median, mean ± σ,
// min–max), then the on/off ratio of each pair's CPU and throughput
// (median and range). Linux only; counting needs root or CAP_PERFMON.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"nbdscope/clientrun"
	"nbdscope/platform"
	"nbdscope/probe/realproc"
)

func main() {
	server := flag.String("server", "", "server command ({socket}, {size} replaced; no shell)")
	client := flag.String("client", "", "client command ({uri}, {socket}, {size} replaced; no shell)")
	size := flag.Int64("size", 1<<30, "export size in bytes: what each run moves")
	pairs := flag.Int("pairs", 20, "pairs of runs (one off, one on each)")
	countServer := flag.Bool("count-server", false, "count the server's calls too during the counted runs (a real server side)")
	flag.Parse()
	if *server == "" || *client == "" || *size <= 0 || *pairs < 1 {
		fmt.Fprintln(os.Stderr, "countpair: need -server, -client, a positive -size and -pairs ≥ 1")
		os.Exit(2)
	}
	if err := realproc.Probe(); err != nil {
		fmt.Fprintln(os.Stderr, "countpair:", err)
		os.Exit(1)
	}
	if err := run(*server, *client, *size, *pairs, *countServer); err != nil {
		fmt.Fprintln(os.Stderr, "countpair:", err)
		os.Exit(1)
	}
}

// sample is one run: the client's CPU seconds and wall seconds.
type sample struct{ cpu, wall float64 }

func run(serverLine, clientLine string, size int64, pairs int, countServer bool) error {
	dir, err := os.MkdirTemp("", "countpair-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "nbd.sock")
	vars := clientrun.Vars{"socket": sock, "size": strconv.FormatInt(size, 10), "uri": "nbd+unix:///?socket=" + sock}
	cpus := platform.AllowedCPUs()
	if len(cpus) < 2 {
		return errors.New("needs two CPUs (server and client on one each)")
	}
	srv, err := startServer(serverLine, vars, cpus[1:2])
	if err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	defer func() { srv.Process.Kill(); <-exited }()
	if err := waitSocket(sock, 10*time.Second, exited); err != nil {
		return err
	}
	argv, err := clientrun.Command{Line: clientLine}.Argv(vars)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	off, on := make([]sample, 0, pairs), make([]sample, 0, pairs)
	for p := range pairs {
		for i := range 2 {
			counted := (p+i)%2 == 1
			s, err := once(argv, cpus[0:1], counted, countServer, srv.Process.Pid)
			if err != nil {
				return err
			}
			if counted {
				on = append(on, s)
			} else {
				off = append(off, s)
			}
		}
	}
	report(off, on, float64(size)/(1<<30))
	return nil
}

func startServer(line string, vars clientrun.Vars, cpus []int) (*exec.Cmd, error) {
	argv, err := clientrun.Command{Line: line}.Argv(vars)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if err := platform.PinProcess(cmd.Process.Pid, cpus); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("holding the server to CPU %v: %w", cpus, err)
	}
	return cmd, nil
}

// waitSocket waits until the server accepts on path (a socket file can
// exist before its listen), or says that it exited first.
func waitSocket(path string, limit time.Duration, exited chan error) error {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-exited:
			exited <- err // for the deferred wait
			return fmt.Errorf("the server exited before accepting on %s (%v)", path, err)
		default:
		}
	}
	return fmt.Errorf("the server did not accept on %s within %v", path, limit)
}

// once runs the client, counted from its exec when counted (and the
// server meanwhile when countServer), and checks that the counting saw
// its calls.
func once(argv []string, cpus []int, counted, countServer bool, serverPid int) (sample, error) {
	var client, server *realproc.Calls
	var openErr error
	if counted && countServer {
		if server, openErr = realproc.OpenCalls(serverPid); openErr != nil {
			return sample{}, fmt.Errorf("counting the server: %w", openErr)
		}
	}
	res, err := clientrun.RunHeld(context.Background(), argv, cpus, func(pid int) {
		if counted {
			client, openErr = realproc.OpenCalls(pid)
		}
	})
	srvIO := server.Close()
	io := client.Close()
	if err != nil {
		return sample{}, fmt.Errorf("client: %w", err)
	}
	if openErr != nil {
		return sample{}, fmt.Errorf("counting the client: %w", openErr)
	}
	if counted && (io.RecvCalls == 0 || countServer && srvIO.SendCalls == 0) {
		return sample{}, fmt.Errorf("a counted run counted no calls (client %+v, server %+v)", io, srvIO)
	}
	return sample{cpu: res.UserS + res.SysS, wall: res.Seconds}, nil
}

func report(off, on []sample, gib float64) {
	cpu := func(s sample) float64 { return s.cpu / gib }
	thr := func(s sample) float64 { return gib / s.wall }
	for _, m := range []struct {
		name string
		s    []sample
	}{{"off", off}, {"on", on}} {
		fmt.Printf("%-3s  client CPU s/GiB %s   GiB/s %s\n", m.name, stats(m.s, cpu), stats(m.s, thr))
	}
	var rc, rt []float64
	for i := range off {
		rc = append(rc, on[i].cpu/off[i].cpu)
		rt = append(rt, off[i].wall/on[i].wall)
	}
	fmt.Printf("on/off per pair: client CPU %s, throughput %s (median, min–max of %d pairs)\n", medRange(rc), medRange(rt), len(off))
}

func stats(s []sample, f func(sample) float64) string {
	v := make([]float64, len(s))
	var sum float64
	for i, x := range s {
		v[i] = f(x)
		sum += v[i]
	}
	mean := sum / float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	sd := 0.0
	if len(v) > 1 {
		sd = math.Sqrt(ss / float64(len(v)-1))
	}
	sort.Float64s(v)
	return fmt.Sprintf("%.3f (%.3f ± %.3f, %.3f–%.3f)", median(v), mean, sd, v[0], v[len(v)-1])
}

func medRange(v []float64) string {
	sort.Float64s(v)
	return fmt.Sprintf("%.3f (%.3f–%.3f)", median(v), v[0], v[len(v)-1])
}

// median of sorted v.
func median(v []float64) float64 {
	n := len(v)
	return (v[(n-1)/2] + v[n/2]) / 2
}
