package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
	"nbdscope/servestats"
)

// statsInterval is --stats as a duration; 0 when it is off.
func statsInterval(f serveFlags) (time.Duration, error) {
	if f.stats == "" && !f.statsSet {
		if f.statsJSON != "" {
			return 0, usageErrorf("serve: --stats-json needs --stats")
		}
		return 0, nil
	}
	d, err := time.ParseDuration(f.stats)
	if err != nil || d < 100*time.Millisecond || d > time.Hour {
		return 0, usageErrorf("serve: --stats=%s: want an interval from 100ms to 1h (1s, 500ms)", f.stats)
	}
	return d, nil
}

// serveWithStats serves with a reporter: a report every interval, the
// summary on SIGUSR1 and at the end. One goroutine does all reporting,
// so reports never interleave.
func serveWithStats(ctx context.Context, srv *nbd.Server, ln net.Listener, interval time.Duration, jsonFile string, stderr io.Writer) error {
	self := func() model.Counters { return wire.SelfCounters(nbd.IOStats{}) }
	rep := servestats.New(srv, self, stderr, time.Now)
	srv.OnConnClose = rep.ConnClosed
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	summary := func() error {
		s := rep.Summary()
		servestats.WriteTable(stderr, s)
		if jsonFile == "" {
			return nil
		}
		return writeStatsJSON(jsonFile, s)
	}
	for {
		select {
		case <-tick.C:
			rep.Tick()
		case <-usr1:
			if err := summary(); err != nil {
				fmt.Fprintf(stderr, "nbdscope serve: %v\n", err)
			}
		case err := <-done:
			rep.Tick() // the last partial interval and the connections that ended in it
			if serr := summary(); serr != nil && err == nil {
				err = serr
			}
			return err
		}
	}
}

// writeStatsJSON replaces file with the summary (written aside, then
// renamed, so a reader never sees half a file).
func writeStatsJSON(file string, s servestats.Summary) error {
	tmp := file + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("--stats-json: %w", err)
	}
	werr := servestats.WriteJSON(f, s)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, file)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("--stats-json: %w", werr)
	}
	return nil
}
