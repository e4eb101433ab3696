package main

import (
	"errors"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"nbdscope/clientrun"
	"nbdscope/model"
	"nbdscope/nbd"
)

func fixed(v ...string) func() []string { return func() []string { return v } }

// The per-side and pair flags are built from model.Settings(), the one
// table of settings: each per-side setting becomes the flag group --NAME
// (both sides), --NAME-a and --NAME-b (one side, winning over --NAME),
// which help prints on one line; a pair setting becomes --NAME. Help,
// value names and completions are the table's.

// loadFlags are the load flags shared by the explorer, run and sweep.
type loadFlags struct {
	fs     *pflag.FlagSet
	values map[string]*[3]string // per-side setting → [both, a, b]
	pair   map[string]*string    // pair setting → its value
	dur    time.Duration
	intv   time.Duration
	at     []string
	preset string
	// forSweep: the flags are sweep's, which takes a preset that sweeps a
	// real client (run and the explorer refuse one: livePresetConfig).
	forSweep bool
}

// newMeasureCmd is a command that measures our load (run, sweep,
// calibrate) with its use line and help: it takes no arguments, has the
// measuring commands' exit table and the load flags (addLoadFlags).
func newMeasureCmd(a *app, use, short, long, example string, withDuration bool, skip ...string) (*cobra.Command, *loadFlags) {
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Example: example, Args: noArgs}
	setExits(cmd, exitsMeasure)
	return cmd, addLoadFlags(a, cmd, withDuration, skip...)
}

// addLoadFlags adds the load flags to cmd; skip names settings the command
// defines itself (sweep's --sndbuf is the list of sizes to sweep).
func addLoadFlags(a *app, cmd *cobra.Command, withDuration bool, skip ...string) *loadFlags {
	fs := cmd.Flags()
	fs.SortFlags = false // help lists the settings in this list's order
	lf := &loadFlags{fs: fs, values: map[string]*[3]string{}, pair: map[string]*string{}, forSweep: cmd.Name() == "sweep"}
	for _, st := range model.Settings() {
		if contains(skip, st.Name) {
			continue
		}
		switch st.Flag {
		case model.FlagSide:
			lf.addSide(cmd, st)
		case model.FlagPair:
			v := new(string)
			lf.pair[st.Name] = v
			fs.StringVar(v, st.Name, "", "`"+st.Var+"` "+st.Help)
			cmd.RegisterFlagCompletionFunc(st.Name, completeFixed(st.Values))
		}
	}
	lf.intv = 250 * time.Millisecond
	fs.VarP(secondsValue{&lf.intv}, "interval", lf.shorthand("interval"), "sample `INTERVAL` (seconds, or a duration: 0.5, 250ms)")
	if withDuration {
		// Only a command with --duration has its default: the explorer
		// (and a sweep) runs until stopped, and a 10 s default here ended
		// the explorer's run at 0:10.
		lf.dur = 10 * time.Second
		fs.VarP(secondsValue{&lf.dur}, "duration", lf.shorthand("duration"), "run `LENGTH` (seconds, or a duration: 10, 1m30s)")
		fs.StringArrayVar(&lf.at, "at", nil, "scripted change `TIME:SIDE.SETTING=VALUE`, repeatable (5s:b.sndbuf=64k)")
	}
	fs.StringVar(&lf.preset, "preset", "", "start from preset `NAME` (see 'nbdscope presets list')")
	cmd.RegisterFlagCompletionFunc("preset", a.completePresets)
	return lf
}

// addSide adds the flag group of a per-side setting.
func (lf *loadFlags) addSide(cmd *cobra.Command, st *model.Setting) {
	v := &[3]string{}
	lf.values[st.Name] = v
	names := [3]string{st.Name, st.Name + "-a", st.Name + "-b"}
	helps := [3]string{st.Help, "side A: " + st.Help, "side B: " + st.Help}
	for i, n := range names {
		short := ""
		if i == 0 {
			short = lf.shorthand(n) // -w is --sndbuf, both sides
		}
		lf.fs.StringVarP(&v[i], n, short, "", "`"+st.Var+"` "+helps[i])
		lf.fs.SetAnnotation(n, sideGroupAnnotation, []string{st.Name})
		if st.Values() != nil {
			cmd.RegisterFlagCompletionFunc(n, completeFixed(st.Values))
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// apply applies the flags on top of base: each value is parsed once, by
// its setting, and put in its side (or the pair).
func (lf *loadFlags) apply(base model.Config) (model.Config, error) {
	state := model.State{Cfg: base}
	// A value typed is applied even when it is 0, so that Validate (or
	// run) refuses --interval 0s as it refuses 1ns, instead of the
	// default silently standing in for it.
	if lf.intv != 0 || lf.fs.Changed("interval") {
		if err := model.CheckInterval(lf.intv); err != nil {
			return state.Cfg, usageErrorf("%s %v: %v", flagName(lf.fs, "interval"), lf.intv, err)
		}
		state.Cfg.Interval = model.Duration(lf.intv)
	}
	if lf.dur != 0 || lf.fs.Lookup("duration") != nil && lf.fs.Changed("duration") {
		state.Cfg.Duration = model.Duration(lf.dur)
	}
	for _, st := range model.Settings() {
		if err := lf.applySetting(&state, st); err != nil {
			return state.Cfg, err
		}
	}
	lf.imageSizes(&state.Cfg)
	cfg := state.Cfg
	for _, at := range lf.at {
		ch, err := model.ParseAt(at)
		if err != nil {
			return cfg, usageErrorf("%v", err) // ParseAt names --at and the change
		}
		cfg.Script = append(cfg.Script, ch)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageErrorf("%v", err)
	}
	if err := checkPrograms(cfg); err != nil {
		return cfg, err
	}
	return cfg, checkImages(cfg)
}

// checkPrograms refuses a side's real client or server whose program is
// not on PATH before anything runs (exit 2), where the side would start,
// run the other side for seconds and then fail (exit 1).
func checkPrograms(cfg model.Config) error {
	for _, sc := range cfg.Sides {
		for _, c := range []struct{ setting, line string }{{model.SetExec, sc.Exec}, {model.SetServer, sc.Server}} {
			if c.line == "" {
				continue
			}
			if err := (clientrun.Command{Line: c.line}).CheckProgram(); err != nil {
				return usageErrorf("--%s-%s %q: %v", c.setting, strings.ToLower(sc.Name), c.line, err)
			}
		}
	}
	return nil
}

// checkImages refuses a spawned server's file: image that does not exist,
// before anything runs (the server would refuse it too: nbdscope never
// creates an image).
func checkImages(cfg model.Config) error {
	for _, sc := range cfg.Sides {
		path, isFile := strings.CutPrefix(sc.Backend, "file:")
		if !isFile || sc.Target != "" {
			continue
		}
		if err := nbd.CheckImage(path); err != nil {
			return usageErrorf("side %s: %v", sc.Name, err)
		}
	}
	return nil
}

// imageSizes serves an existing file: image at its own size on a side
// whose size was not given: the server never resizes an image, so the
// default size would refuse every image not that big. A size that is
// given still has to match (the server says so).
func (lf *loadFlags) imageSizes(cfg *model.Config) {
	sizes := lf.values[model.SetSize]
	for side := range cfg.Sides {
		sc := &cfg.Sides[side]
		path, isFile := strings.CutPrefix(sc.Backend, "file:")
		if !isFile || sizes[0] != "" || sizes[1+side] != "" {
			continue
		}
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() >= 512 && fi.Size()%512 == 0 {
			sc.Size = fi.Size()
		}
	}
}

// applySetting applies one setting's flags, if given. An empty value
// typed is refused (it would have been ignored), but for the free-text
// settings, where it means none: --exec-b "" is our load. An error names
// the flag typed (valueError).
func (lf *loadFlags) applySetting(state *model.State, st *model.Setting) error {
	parse := func(flag, text string) (model.Value, error) {
		if text == "" && st.Type != model.TypeText {
			return model.Value{}, usageErrorf("%s: an empty value; want %s", flagName(lf.fs, flag), st.Help)
		}
		v, err := st.Parse(text)
		if err != nil {
			return v, valueError(lf.fs, flag, err)
		}
		return v, nil
	}
	if p, ok := lf.pair[st.Name]; ok && lf.fs.Changed(st.Name) {
		v, err := parse(st.Name, *p)
		if err != nil {
			return err
		}
		st.Put(state, 0, v)
	}
	vals, ok := lf.values[st.Name]
	if !ok {
		return nil
	}
	for side := 0; side < 2; side++ {
		flag, text, given := st.Name, vals[0], lf.fs.Changed(st.Name)
		if one := st.Name + "-" + string(rune('a'+side)); lf.fs.Changed(one) {
			flag, text, given = one, vals[1+side], true
		}
		if !given {
			continue
		}
		v, err := parse(flag, text)
		if err != nil {
			return err
		}
		if err := state.Cfg.Sides[side].SetValue(st, v); err != nil {
			return valueError(lf.fs, flag, err)
		}
	}
	return nil
}

// valueError is a refusal of the value of flag, as typed, naming it once
// with the value and the reason: --sndbuf-b "zz": want default, … (the
// setting's own error names the setting, which read as the base flag's:
// -w/--sndbuf: sndbuf: buffer "zz": …). It is a usage error (exit 2).
// A nil fs names the flag by its long form.
func valueError(fs *pflag.FlagSet, flag string, err error) error {
	name := "--" + flag
	if fs != nil {
		name = flagName(fs, flag)
	}
	var ve *model.ValueError
	if errors.As(err, &ve) {
		return usageErrorf("%s %q: %v", name, ve.Value, ve.Reason)
	}
	return usageErrorf("%s: %v", name, err)
}

// config resolves the flags on the preset (or the built-in default).
func (lf *loadFlags) config(a *app) (model.Config, error) {
	preset := a.livePresetConfig
	if lf.forSweep {
		preset = a.presetConfig
	}
	base, err := preset(lf.preset)
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
