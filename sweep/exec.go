package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"nbdscope/clientrun"
	"nbdscope/engine"
	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/platform"
	"nbdscope/probe/realproc"
)

// An exec sweep measures a real client (qemu-img, nbdcopy, blksum) instead
// of our load process: for each send buffer it starts a server child like
// a side's (null backend filled with 0xff, or the side's backend) on a
// fresh unix socket, runs the command against it Warmup times unmeasured
// and Repeat times measured, and takes the client's figures from wait4 and
// the server's from its own counted I/O and getrusage.

// ExecSweep runs an exec sweep: the server of base's side A (backend; the
// export's size is spec.Bytes), one fresh server per size. argv turns the
// placeholders into the command to run. progress, if set, is called
// after each measured run.
//
// The runs go in rounds: every size's warm-ups first, then one measured
// run of each size in turn, Repeat times. On a shared machine (a VM
// above all) the speed of the same run drifts over tens of seconds; run
// size after size, a slow stretch lands on one size's repeats and makes a
// ratio nobody can reproduce. In rounds each size meets the same
// stretches. On an error (a failing command stops the sweep) the rows
// hold the runs made so far (Repeats says how many).
func ExecSweep(ctx context.Context, base model.Config, spec model.SweepSpec, cmd clientrun.Command, opts engine.Options, progress func(SweepProgress)) ([]model.SweepRow, error) {
	if spec.Exec == nil || len(spec.Sizes) == 0 || spec.Bytes <= 0 || spec.Repeat < 1 || spec.Exec.Warmup < 0 {
		return nil, errors.New("exec sweep: need a command, sizes, a positive export size and at least one repeat")
	}
	opts, err := opts.WithDefaults()
	if err != nil {
		return nil, err
	}
	dir, removeDir, err := clientrun.TempDir("nbdscope-exec-")
	if err != nil {
		return nil, err
	}
	defer removeDir()
	servers, err := startExecServers(base.Sides[0], spec, cmd, opts, dir)
	defer func() {
		for _, s := range servers {
			s.srv.Stop(engine.ChildStopGrace)
		}
	}()
	if err != nil {
		return nil, err
	}
	fill := startExecFill(ctx, base.FillSource())
	defer fill.stop()
	pr := SweepProgress{Sizes: len(spec.Sizes), Repeats: spec.Repeat, Total: len(spec.Sizes) * spec.Repeat}
	for round := -spec.Exec.Warmup; round < spec.Repeat; round++ {
		for i, s := range servers {
			if err := ctx.Err(); err != nil {
				return execRows(servers), err
			}
			run, err := execOnce(ctx, s.srv, s.argv, s.place.clientCPUs, spec.Bytes, fill)
			if err != nil {
				return execRows(servers), fmt.Errorf("sweep %s=%s: %w", model.SetSndBuf, s.row.Buffer, err)
			}
			if s.srv.RealPid() > 0 {
				s.row.Effective = realEffective(s.srv, s.row.Effective)
			}
			if round < 0 {
				continue // a warm-up
			}
			s.runs = append(s.runs, run)
			if progress != nil {
				pr.Size, pr.SizeIndex, pr.Repeat, pr.Last = s.row.Buffer, i+1, len(s.runs), execRow(s.row, s.runs)
				pr.Done++
				progress(pr)
			}
		}
	}
	return execRows(servers), nil
}

// execServer is one size's server in an exec sweep and its runs so far.
type execServer struct {
	srv   *engine.Server
	argv  []string // the command, placeholders replaced
	place execPlacement
	row   model.SweepRow // the size, its effective value and placement
	runs  []model.ExecRun
}

// startExecServers starts a server for each size, on a socket in a
// directory of its own under dir (a server removes its socket's directory
// when it stops), held where the placement says. The servers started are
// returned even with an error, for the caller to stop.
func startExecServers(sd model.SideConfig, spec model.SweepSpec, cmd clientrun.Command, opts engine.Options, dir string) ([]*execServer, error) {
	var servers []*execServer
	for i, size := range spec.Sizes {
		sdir := filepath.Join(dir, strconv.Itoa(i))
		if err := os.Mkdir(sdir, 0o700); err != nil {
			return servers, err
		}
		sock := filepath.Join(sdir, "nbd.sock")
		at := sd // the side's server at this size, on its own unix socket
		at.Size, at.Transport, at.SndBuf = spec.Bytes, model.TransportUnix, size
		sspec := wire.NewServerSpec(at, sock)
		srv, ready, err := engine.StartServer(opts, "exec", sspec)
		if err != nil {
			return servers, fmt.Errorf("sweep %s=%s: %w", model.SetSndBuf, size, err)
		}
		s := &execServer{srv: srv, row: model.SweepRow{Buffer: size.String()}}
		servers = append(servers, s)
		if s.place, err = placeExec(sd, srv); err != nil {
			return servers, err
		}
		s.argv, err = cmd.Argv(clientrun.Vars{"uri": ready.URI, "socket": sock, "size": strconv.FormatInt(spec.Bytes, 10)})
		if err != nil {
			return servers, fmt.Errorf("client command %q: %w", cmd.Line, err) // Split's error says where, not the line
		}
		s.row.Figures.Placement = s.place.Placement
		_, s.row.Effective, _ = nbd.ProbeSocketBuffer("unix", nbd.SendBuf, model.BufRequest(size))
	}
	return servers, nil
}

// execRows are the rows of the sizes with a measured run so far.
func execRows(servers []*execServer) []model.SweepRow {
	var rows []model.SweepRow
	for _, s := range servers {
		if len(s.runs) > 0 {
			rows = append(rows, execRow(s.row, s.runs))
		}
	}
	return rows
}

// execPlacement is where an exec sweep's server and client run.
type execPlacement struct {
	model.Placement
	clientCPUs []int // nil: not held
}

// placeExec holds the server where the side's placement puts a server
// and records where the client is to run: in a sweep, as in a live side,
// a 2-core machine left to the scheduler flips between one core and two
// from run to run, and the buffer's effect with it (model's placement.go). Where
// processes cannot be held (macOS), both run where the scheduler puts
// them and the figures say os. A server that cannot be held stops the
// sweep: its figures would not be what the placement claims.
func placeExec(sd model.SideConfig, srv *engine.Server) (execPlacement, error) {
	pl := model.Place(sd.Get(model.SetPlacement))
	if !platform.PinSupported {
		pl = model.PlaceOS
	}
	clientCPUs, serverCPUs := model.PlacementCPUs(pl, model.ModeAlternate, 0, platform.AllowedCPUs())
	for _, pid := range []int{srv.Pid(), srv.RealPid()} {
		if pid <= 0 {
			continue // no real server
		}
		if err := platform.PinProcess(pid, serverCPUs); err != nil {
			return execPlacement{}, fmt.Errorf("placement %s: %w (--placement os leaves it to the scheduler)", pl, err)
		}
	}
	return execPlacement{
		Placement:  model.Placement{Setting: pl, LoadCPUs: model.CPUList(clientCPUs), ServerCPUs: model.CPUList(serverCPUs)},
		clientCPUs: clientCPUs,
	}, nil
}

// execOnce runs the client once, between two polls of the server.
func execOnce(ctx context.Context, srv *engine.Server, argv []string, cpus []int, export int64, fill *execFill) (model.ExecRun, error) {
	before, err := srv.Poll(5 * time.Second)
	if err != nil {
		return model.ExecRun{}, fmt.Errorf("server: %w", err)
	}
	m0, measured := engine.ReadMachine()
	var calls *realproc.Calls
	var callsErr error
	if callsErr = realproc.Probe(); callsErr == nil {
		defer func() { calls.Close() }()
	}
	// The bulk sender for reads is the server: a real one's own process
	// when the side has one, else our server child.
	sender := srv.Pid()
	if srv.RealPid() > 0 {
		sender = srv.RealPid()
	}
	fw := fill.watch(sender)
	var sched *execSched
	res, err := clientrun.RunHeld(ctx, argv, cpus, func(pid int) {
		if callsErr == nil {
			calls, callsErr = realproc.OpenCalls(pid)
		}
		sched = startExecSched(pid)
		fw.started(pid)
	})
	var clientSched model.Sched
	if sched != nil {
		clientSched = sched.finish()
	}
	if err != nil {
		fw.finish(false)
		return model.ExecRun{}, err
	}
	// The client has exited, so every reply it read was sent; the server
	// may still be closing the connection, which moves no payload.
	after, err := srv.Poll(5 * time.Second)
	if err != nil {
		return model.ExecRun{}, fmt.Errorf("server: %w (%s)", err, srv.LastStderr())
	}
	run := model.ExecRun{Result: res, Server: after.Counters.Sub(before.Counters), ClientSched: clientSched}
	if calls != nil {
		io := calls.Close()
		calls = nil
		run.ClientCalls = &io
	} else if callsErr != nil {
		run.CallsNA = wire.ReasonOf(callsErr)
	}
	if after.Payload != nil && before.Payload != nil {
		run.Payload = after.Payload.Sub(*before.Payload)
	} else if srv.RealPid() > 0 {
		run.Payload, run.PayloadAssumed = assumedPayload(run.Server, run.ClientCalls, export), true
	}
	run.Fill, run.FillNA, run.FillSource = fw.finish(execWrites(run.Payload))
	if m1, ok := engine.ReadMachine(); measured && ok {
		run.OtherCoresBusy = engine.OthersBetween(m0, m1, res.UserS+res.SysS+run.Server.UserS+run.Server.SysS)
	}
	return run, nil
}

// execRow folds the runs so far into row: the seed's columns (time, user,
// system) each as its median with min–max, the figures of the median run.
func execRow(row model.SweepRow, runs []model.ExecRun) model.SweepRow {
	x := &model.ExecRow{Runs: append([]model.ExecRun(nil), runs...)}
	pick := func(f func(model.ExecRun) float64) (med, lo, hi float64) {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		sort.Float64s(v)
		n := len(v)
		return (v[(n-1)/2] + v[n/2]) / 2, v[0], v[n-1] // an even count: the middle two's mean
	}
	row.Seconds, x.SecondsMin, x.SecondsMax = pick(func(r model.ExecRun) float64 { return r.Seconds })
	row.ClientUserS, x.UserMin, x.UserMax = pick(func(r model.ExecRun) float64 { return r.UserS })
	row.ClientSysS, x.SysMin, x.SysMax = pick(func(r model.ExecRun) float64 { return r.SysS })
	med := medianRun(runs, func(r model.ExecRun) float64 { return r.Seconds })
	x.ServerSentB = med.Server.IO.SendBytes
	row.Figures = execFigures(row, med)
	f := &row.Figures
	row.ThroughputBps = model.Throughput(f.Bytes, row.Seconds)
	row.ServerUserS, row.ServerSysS = f.Server.UserS, f.Server.SysS
	row.RecvPer2MiB = f.ReceiverCallsPer2MiB()
	// The receiver's EAGAIN, both directions, as a sweep of our load
	// gives it: the client's for reads once its calls are counted
	// (unknown otherwise: never 0).
	row.EAGAINPer2MiB = figureOfReceiver(f, func(p *model.Process) model.Figure { return p.EAGAINPer2MiB })
	row.Repeats = len(runs)
	row.Exec = x
	ms := make([]model.SweepMeasurement, len(runs))
	for i, r := range runs {
		ms[i] = execMeasurement(r)
	}
	row.SetSpread(ms)
	row.OtherCoresBusy = worstOther(runs, func(r model.ExecRun) *model.Figure { return r.OtherCoresBusy })
	return row
}

// figureOfReceiver is a figure of the bulk data's receiver in f, unknown
// when there is none.
func figureOfReceiver(f *model.Figures, fig func(*model.Process) model.Figure) model.Figure {
	if r := f.Receiver(); r != nil {
		return fig(r)
	}
	return model.Unknown
}

// execFigures are one run's figures in the one Figures layout. The
// workload is what the server saw: write when it received more payload
// than it sent.
func execFigures(row model.SweepRow, run model.ExecRun) model.Figures {
	// The client's shape (connections, request size) is its own: not stamped.
	st := model.Stamp{Workload: model.WorkRead, Transport: model.TransportUnix, SndBuf: row.Buffer, Placement: row.Figures.Placement.Setting}
	if execWrites(run.Payload) {
		st.Workload = model.WorkWrite
	}
	pl := run.Payload.Total()
	cc := wire.ClientCounters(run.Result)
	cc.Sched = run.ClientSched
	if run.ClientCalls != nil {
		cc.IO = *run.ClientCalls
	}
	client := model.ProcessFigures(cc, pl, run.Seconds)
	if run.ClientCalls == nil {
		// Not counted here (ExecRun.CallsNA says why): unknown, never 0.
		client.RecvCallsPer2MiB, client.SendCallsPer2MiB = model.Unknown, model.Unknown
		client.RecvEAGAINPer2MiB, client.SendEAGAINPer2MiB, client.EAGAINPer2MiB = model.Unknown, model.Unknown, model.Unknown
	}
	server := model.ProcessFigures(run.Server, pl, run.Seconds)
	f := model.Figures{Settings: st, Seconds: run.Seconds, Bytes: pl, ThroughputBps: model.Throughput(pl, run.Seconds),
		Client: client, Server: &server, LatencyP50Ms: model.Unknown, LatencyP99Ms: model.Unknown, LatencyMaxMs: model.Unknown,
		SndBuf:    model.Buffers{ServerRequested: row.Buffer, ServerEffective: row.Effective, ClientRequested: model.BufDefaultName, ClientRcvRequested: model.BufDefaultName},
		Placement: row.Figures.Placement}
	// Sampled from outside while the client ran (execfill.go); n/a (null)
	// with the run's FillNA saying why, never 0.
	f.SetFill(run.Fill)
	return f
}

// realEffective is a real server's send buffer as its data socket had it
// (sock_diag, at its last look): at default that is the server's own
// (qemu-nbd 10.1+ sets 2 MiB), not a fresh socket's. prev when it did not
// see one.
func realEffective(srv *engine.Server, prev int) int {
	if m, err := srv.Poll(5 * time.Second); err == nil && m.SndBuf > 0 {
		return m.SndBuf
	}
	return prev
}

// assumedPayload is a run's payload against a real server, whose bytes
// cannot be counted on a unix socket (sock_diag has no byte counters for
// it, and /proc/PID/io leaves sendmsg and recvmsg out): the export moved
// once, read when more calls carried data from the server to the client
// than back, else written. Real clients that read or write the whole
// export (qemu-img convert, nbdcopy, blksum) do that.
//
// The count that tells them apart is the calls that moved bytes: the
// bulk data's receiver reads each message's header and then its payload
// (two or more receive calls a request), the other end one header; each
// end sends a message in one call or more. EAGAINs are left out: a server
// that polls for the next request takes one for nearly every request
// whichever way the data goes, and with them a qemu-nbd read at a 2m
// buffer (532 receives + 318 EAGAIN against 693 sends + 144) was taken
// for a write. client is the client's calls (nil: not counted): with
// them the receiver's payload reads decide it even more clearly.
func assumedPayload(server model.Counters, client *nbd.IOStats, export int64) nbd.Payload {
	toClient, toServer := server.IO.SendCalls, server.IO.RecvCalls
	if client != nil {
		toClient += client.RecvCalls
		toServer += client.SendCalls
	}
	if toClient >= toServer {
		return nbd.Payload{ReadBytes: uint64(export)}
	}
	return nbd.Payload{WriteBytes: uint64(export)}
}

// execWrites says a run's bulk data went to the server (the client was
// the sender): it received more payload than it sent.
func execWrites(p nbd.Payload) bool {
	return model.FlowOfPayload(p.ReadBytes, p.WriteBytes) == model.FlowWrite // as an exec side's samples
}
