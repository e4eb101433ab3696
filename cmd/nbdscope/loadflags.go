package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"nbdscope/engine"
	"nbdscope/units"
)

// loadFlags are the load flags shared by the TUI, run and sweep. --X sets
// both sides; --X-a and --X-b set one side and win over --X.
type loadFlags struct {
	fs     *flag.FlagSet
	values map[string]*[3]string // setting → [both, a, b]
	mode   string
	dur    time.Duration
	intv   time.Duration
	at     multiFlag
	preset string
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// perSide lists the per-side flags: name, help.
var perSide = []struct{ name, help string }{
	{"sndbuf", "server SO_SNDBUF: default, macos (8 KiB effective) or a size (64k, 2m)"},
	{"client-sndbuf", "client SO_SNDBUF: default, macos or a size"},
	{"client-rcvbuf", "client SO_RCVBUF: default, macos or a size"},
	{"connections", "connections per side (1…64)"},
	{"request-size", "request size (512 … 32m)"},
	{"in-flight", "requests in flight per connection (1…256)"},
	{"workload", "read, write, randread, randwrite or mixed"},
	{"read-percent", "share of reads in the mixed workload (0…100)"},
	{"consume", "what the client does with read data: copy, scan (qemu-img's zero scan), hash (blksum / nbdcopy --blkhash) or none (a pure sink)"},
	{"hash-threads", "threads the hash consume mode digests with: auto (1, or the side's cores minus one when placed split) or 1…64"},
	{"placement", "where the server and load process run: split (own cores), shared (one core) or os (the scheduler decides)"},
	{"transport", "unix or tcp"},
	{"target", "an NBD URI to load instead of a spawned server"},
	{"backend", "spawned server backend: null, pattern, memory or file:PATH"},
	{"size", "spawned server export size (e.g. 64g)"},
}

func newLoadFlags(fs *flag.FlagSet, withDuration bool) *loadFlags {
	lf := &loadFlags{fs: fs, values: map[string]*[3]string{}}
	for _, f := range perSide {
		v := &[3]string{}
		lf.values[f.name] = v
		fs.StringVar(&v[0], f.name, "", f.help+" (both sides)")
		fs.StringVar(&v[1], f.name+"-a", "", "side A only: "+f.name)
		fs.StringVar(&v[2], f.name+"-b", "", "side B only: "+f.name)
	}
	fs.StringVar(&lf.mode, "mode", "", "alternate or concurrent (default: alternate below 4 cores)")
	fs.DurationVar(&lf.intv, "interval", 250*time.Millisecond, "sample interval")
	if withDuration {
		fs.DurationVar(&lf.dur, "duration", 10*time.Second, "run length")
		fs.Var(&lf.at, "at", "scripted change TIME:SIDE.SETTING=VALUE, repeatable (5s:b.sndbuf=64k)")
	}
	fs.StringVar(&lf.preset, "preset", "", "start from this preset (see 'nbdscope presets list')")
	return lf
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
	for _, f := range perSide {
		v := lf.values[f.name]
		for side := 0; side < 2; side++ {
			val := v[0]
			if v[1+side] != "" {
				val = v[1+side]
			}
			if val == "" {
				continue
			}
			sc := &cfg.Sides[side]
			var err error
			switch f.name {
			case "target":
				sc.Target = val
			case "backend":
				sc.Backend = val
			case "size":
				sc.Size, err = units.ParseSize(val)
			case "transport":
				sc.Transport = val
			default:
				err = sc.Set(f.name, val)
			}
			if err != nil {
				return cfg, usageErrorf("--%s: %v", f.name, err)
			}
		}
	}
	for _, a := range lf.at {
		ch, err := engine.ParseAt(a)
		if err != nil {
			return cfg, usageErrorf("%v", err)
		}
		cfg.Script = append(cfg.Script, ch)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageErrorf("%v", err)
	}
	return cfg, nil
}

// config resolves the flags on the preset (or the built-in default).
func (lf *loadFlags) config() (engine.Config, error) {
	base, err := presetConfig(lf.preset)
	if err != nil {
		return base, err
	}
	return lf.apply(base)
}

// presetConfig finds a preset's configuration; "" is the built-in default.
// It is replaced by the presets package when that is wired in.
var presetConfig = func(name string) (engine.Config, error) {
	if name == "" {
		return engine.DefaultConfig(), nil
	}
	return engine.Config{}, fmt.Errorf("unknown preset %q", name)
}
