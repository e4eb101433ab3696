package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"
)

// SweepSpec is a buffer-size sweep: for each server send buffer, move
// Bytes of payload (after a warm-up) Repeat times and keep the median.
type SweepSpec struct {
	Sizes  []Buf `json:"sizes"`
	Bytes  int64 `json:"bytes"`
	Repeat int   `json:"repeat"`
	// Setting is what is swept: SetSndBuf (server), SetClientSndBuf or
	// SetClientRcvBuf.
	Setting string `json:"setting,omitempty"`
}

// DefaultSweepSizes are the sizes of the published tables.
var DefaultSweepSizes = []string{"default", "64k", "128k", "256k", "512k", "1m", "2m", "4m"}

// SweepRow is one buffer size's median result.
type SweepRow struct {
	Buffer        string    `json:"buffer"`
	Effective     int       `json:"effective"`
	Seconds       float64   `json:"seconds"` // time to move Bytes
	UserS         float64   `json:"user_s"`  // client + server
	SysS          float64   `json:"sys_s"`
	ThroughputBps Figure    `json:"throughput_bps"`
	RecvPer2MiB   Figure    `json:"recv_calls_per_2mib"` // receiver of the bulk data
	Repeats       int       `json:"repeats"`
	Placement     Placement `json:"placement"` // where the side's processes ran
}

// Sweep runs spec on side A of base (side B stays paused) and reports a row
// per size. progress, if set, is called after each measurement.
func Sweep(ctx context.Context, base Config, spec SweepSpec, opts Options, progress func(size string, rep int)) ([]SweepRow, error) {
	if len(spec.Sizes) == 0 || spec.Bytes <= 0 || spec.Repeat < 1 {
		return nil, errors.New("sweep: need sizes, a positive byte count and at least one repeat")
	}
	if spec.Setting == "" {
		spec.Setting = SetSndBuf
	}
	var rows []SweepRow
	for _, size := range spec.Sizes {
		var runs []SweepRow
		for r := 0; r < spec.Repeat; r++ {
			if err := ctx.Err(); err != nil {
				return rows, err
			}
			cfg := base
			cfg.Mode = ModeConcurrent
			cfg.Duration = 0
			cfg.Script = nil
			if err := cfg.Sides[0].Set(spec.Setting, size.String()); err != nil {
				return rows, err
			}
			row, err := sweepOne(ctx, cfg, spec.Bytes, opts)
			if err != nil {
				return rows, fmt.Errorf("sweep %s=%s: %w", spec.Setting, size, err)
			}
			row.Buffer = size.String()
			runs = append(runs, row)
			if progress != nil {
				progress(size.String(), r+1)
			}
		}
		sort.Slice(runs, func(i, j int) bool { return runs[i].Seconds < runs[j].Seconds })
		med := runs[len(runs)/2]
		med.Repeats = len(runs)
		rows = append(rows, med)
	}
	return rows, nil
}

// sweepOne moves bytes on side A after a warm-up sample and measures it.
func sweepOne(ctx context.Context, cfg Config, bytes int64, opts Options) (SweepRow, error) {
	var row SweepRow
	p, err := StartWith(ctx, cfg, opts)
	if err != nil {
		return row, err
	}
	defer p.Stop()
	if err := p.SetPaused(1, true); err != nil {
		return row, err
	}
	warm := false
	var moved uint64
	var user, sys, secs float64
	var calls uint64
	write := isWriteWorkload(cfg.Sides[0].Workload)
	deadline := time.After(5 * time.Minute)
	for {
		select {
		case <-deadline:
			return row, errors.New("did not finish within 5 minutes")
		case u, ok := <-p.Updates():
			if !ok {
				return row, errors.New("run ended early")
			}
			if u.Crash != nil {
				return row, errors.New(u.Crash.Text())
			}
			s := u.Sample
			if s == nil || s.Side != cfg.Sides[0].Name || !s.Active || s.Bytes == 0 {
				continue
			}
			if !warm {
				warm = true // the first interval includes connection set-up
				continue
			}
			moved += s.Bytes
			secs += s.Seconds
			user += float64(s.Client.UserS)
			sys += float64(s.Client.SysS)
			if s.Server != nil {
				user += float64(s.Server.UserS)
				sys += float64(s.Server.SysS)
			}
			rc := s.Client.RecvCalls
			if write && s.Server != nil {
				rc = s.Server.RecvCalls
			}
			calls += rc
			row.Effective = s.SndBuf.ServerEffective
			row.Placement = s.Placement
			if moved >= uint64(bytes) {
				// Scale to exactly the requested amount: the last
				// interval overshoots by up to one sample.
				f := float64(bytes) / float64(moved)
				row.Seconds = secs * f
				row.UserS = user * f
				row.SysS = sys * f
				row.ThroughputBps = Throughput(moved, secs)
				row.RecvPer2MiB = CallsPer2MiB(calls, moved)
				return row, nil
			}
		}
	}
}
