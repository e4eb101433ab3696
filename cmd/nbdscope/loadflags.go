package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"nbdscope/engine"
	"nbdscope/units"
)

// sideSetting is one per-side setting. Each becomes the flag group --NAME
// (both sides), --NAME-a and --NAME-b (one side, winning over --NAME); help
// prints the group on one line and completion offers values.
type sideSetting struct {
	name    string
	varname string // the value's name in help
	help    string
	values  func() []string // completion candidates; nil: none
}

func fixed(v ...string) func() []string { return func() []string { return v } }

func bufValues() []string { return append([]string{"macos"}, engine.BufLadder...) }

// sideSettings is the one list of the per-side settings: the flags, their
// help groups and their completions are all built from it.
var sideSettings = []sideSetting{
	{engine.SetSndBuf, "SIZE", "server SO_SNDBUF: default, macos (8 KiB effective) or a size (64k, 2m)", bufValues},
	{engine.SetClientSndBuf, "SIZE", "client SO_SNDBUF: default, macos or a size", bufValues},
	{engine.SetClientRcvBuf, "SIZE", "client SO_RCVBUF: default, macos or a size", bufValues},
	{engine.SetConnections, "N", "connections per side (1…64)", fixed("1", "2", "4", "8", "16")},
	{engine.SetRequestSize, "SIZE", "request size (512 … 32m)", fixed("4k", "64k", "256k", "1m", "2m", "32m")},
	{engine.SetInFlight, "N", "requests in flight per connection (1…256)", fixed("1", "4", "16", "64")},
	{engine.SetWorkload, "WORKLOAD", "read, write, randread, randwrite or mixed", func() []string { return engine.Workloads }},
	{engine.SetReadPercent, "PCT", "share of reads in the mixed workload (0…100)", nil},
	{engine.SetConsume, "HOW", "what the client does with read data: copy, scan (qemu-img's zero scan), hash (blksum / nbdcopy --blkhash) or none (a pure sink)",
		fixed(engine.ConsumeCopy, engine.ConsumeScan, engine.ConsumeHash, engine.ConsumeNone)},
	{engine.SetHashThreads, "N", "threads the hash consume mode digests with: auto (1, or the side's cores minus one when placed split) or 1…64",
		fixed("auto", "1", "2", "4")},
	{engine.SetPlacement, "WHERE", "where server and load process run: split (own cores), shared (one core) or os",
		func() []string { return engine.Placements }},
	{engine.SetTransport, "unix|tcp", "unix or tcp", fixed("unix", "tcp")},
	{"target", "URI", "an NBD URI to load instead of a spawned server", nil},
	{"backend", "BACKEND", "spawned server backend: null, pattern, memory or file:PATH", fixed("null", "pattern", "memory", "file:")},
	{"size", "SIZE", "spawned server export size (e.g. 64g)", nil},
}

// loadFlags are the load flags shared by the explorer, run and sweep.
type loadFlags struct {
	fs     *pflag.FlagSet
	values map[string]*[3]string // setting → [both, a, b]
	mode   string
	dur    time.Duration
	intv   time.Duration
	at     []string
	preset string
}

// addLoadFlags adds the load flags to cmd; skip names settings the command
// defines itself (sweep's --sndbuf is the list of sizes to sweep).
func addLoadFlags(a *app, cmd *cobra.Command, withDuration bool, skip ...string) *loadFlags {
	fs := cmd.Flags()
	fs.SortFlags = false // help lists the settings in this list's order
	lf := &loadFlags{fs: fs, values: map[string]*[3]string{}}
	for _, s := range sideSettings {
		if contains(skip, s.name) {
			continue
		}
		v := &[3]string{}
		lf.values[s.name] = v
		names := [3]string{s.name, s.name + "-a", s.name + "-b"}
		helps := [3]string{s.help, "side A: " + s.help, "side B: " + s.help}
		for i, n := range names {
			fs.StringVar(&v[i], n, "", "`"+s.varname+"` "+helps[i])
			fs.SetAnnotation(n, sideGroupAnnotation, []string{s.name})
			if s.values != nil {
				cmd.RegisterFlagCompletionFunc(n, completeFixed(s.values))
			}
		}
	}
	fs.StringVar(&lf.mode, "mode", "", "run `MODE`: alternate or concurrent (default: alternate below 4 cores)")
	cmd.RegisterFlagCompletionFunc("mode", completeFixed(fixed(engine.ModeAlternate, engine.ModeConcurrent)))
	fs.DurationVar(&lf.intv, "interval", 250*time.Millisecond, "sample `INTERVAL`")
	if withDuration {
		fs.DurationVar(&lf.dur, "duration", 10*time.Second, "run `LENGTH`")
		fs.StringArrayVar(&lf.at, "at", nil, "scripted change `TIME:SIDE.SETTING=VALUE`, repeatable (5s:b.sndbuf=64k)")
	}
	fs.StringVar(&lf.preset, "preset", "", "start from preset `NAME` (see 'nbdscope presets list')")
	cmd.RegisterFlagCompletionFunc("preset", a.completePresets)
	return lf
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// apply applies the flags on top of base.
func (lf *loadFlags) apply(base engine.Config) (engine.Config, error) {
	cfg := base
	if lf.mode != "" {
		cfg.Mode = lf.mode
	}
	if lf.intv != 0 {
		cfg.Interval = engine.Duration(lf.intv)
	}
	if lf.dur != 0 {
		cfg.Duration = engine.Duration(lf.dur)
	}
	for _, s := range sideSettings {
		v, ok := lf.values[s.name]
		if !ok {
			continue
		}
		for side := 0; side < 2; side++ {
			val := v[0]
			if v[1+side] != "" {
				val = v[1+side]
			}
			if val == "" {
				continue
			}
			if err := setSide(&cfg.Sides[side], s.name, val); err != nil {
				return cfg, usageErrorf("--%s: %v", s.name, err)
			}
		}
	}
	for _, at := range lf.at {
		ch, err := engine.ParseAt(at)
		if err != nil {
			return cfg, usageErrorf("--at: %v", err)
		}
		cfg.Script = append(cfg.Script, ch)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageErrorf("%v", err)
	}
	return cfg, nil
}

// setSide sets one setting of a side from its text.
func setSide(sc *engine.SideConfig, name, val string) error {
	var err error
	switch name {
	case "target":
		sc.Target = val
	case "backend":
		sc.Backend = val
	case "size":
		sc.Size, err = units.ParseSize(val)
	case engine.SetTransport:
		sc.Transport = val
	default:
		err = sc.Set(name, val)
	}
	return err
}

// config resolves the flags on the preset (or the built-in default).
func (lf *loadFlags) config(a *app) (engine.Config, error) {
	base, err := a.presetConfig(lf.preset)
	if err != nil {
		return base, err
	}
	return lf.apply(base)
}

// completeFixed completes a fixed value list.
func completeFixed(values func() []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []string
		for _, v := range values() {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
