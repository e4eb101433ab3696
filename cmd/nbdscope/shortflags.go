package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"nbdscope/model"
)

// Short flags where users' hands already go: iperf3's on run and the
// explorer (-t duration, -P connections, -l request size, -w send
// buffer, -i interval, -J JSON), hyperfine's on sweep (-r repeat, -w
// warm-up: there -w is hyperfine's, not iperf3's), qemu-nbd's on serve
// (serve_qemu.go).

// iperfShorthands are the load flags' short forms on run and the
// explorer. A sweep takes none of them: hyperfine's -P (parameter scan)
// and -i (ignore failure) mean something else to its users.
var iperfShorthands = map[string]string{
	model.SetConnections: "P",
	model.SetRequestSize: "l",
	model.SetSndBuf:      "w",
	"interval":           "i",
	"duration":           "t",
}

// loadShorthand is the short form of a load flag, "" for none.
func (lf *loadFlags) shorthand(name string) string {
	if lf.forSweep {
		return ""
	}
	return iperfShorthands[name]
}

// flagName is how a message names a flag: "-w/--sndbuf" when it has a
// short form (the user may have typed either), else "--sndbuf".
func flagName(fs *pflag.FlagSet, name string) string {
	if f := fs.Lookup(name); f != nil && f.Shorthand != "" {
		return "-" + f.Shorthand + "/--" + name
	}
	return "--" + name
}

// secondsValue is a duration flag that also takes a bare number of
// seconds, as iperf3's -t 10 and -i 0.5 do: "3" is 3s, "0.5" 500ms;
// "250ms", "1m30s" are Go durations as before.
type secondsValue struct{ d *time.Duration }

func (v secondsValue) String() string { return v.d.String() }
func (v secondsValue) Type() string   { return "duration" }

func (v secondsValue) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if n < 0 || n > (1<<62)/1e9 {
			return fmt.Errorf("%s seconds: want a positive number of seconds or a duration (10, 0.5, 250ms)", s)
		}
		*v.d = time.Duration(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want seconds or a duration (10, 0.5, 250ms, 1m30s)")
	}
	*v.d = d
	return nil
}

// errGivenTwice marks a flag given a second time.
var errGivenTwice = errors.New("given twice")

// onceValue refuses a second value for a flag with a short form when the
// short form was typed: pflag takes the last one silently, so "-w 2m … -w
// 4m" (or -w and --sndbuf) would measure something else than half the
// command line says, and a short flag is typed by hand, from habit (iperf3's
// -w is a buffer, hyperfine's a warm-up). A long flag given twice keeps
// pflag's rule, the last wins: scripts build command lines that way, a
// base and then what overrides it.
type onceValue struct {
	pflag.Value
	flag  *pflag.Flag
	args  *[]string // the command line (app.args)
	first string
	set   bool
}

func (o *onceValue) Set(s string) error {
	if o.set && o.flag.Shorthand != "" && shortTyped(*o.args, o.flag.Shorthand[0]) {
		return fmt.Errorf("%w (%q, then %q)", errGivenTwice, o.first, s)
	}
	if !o.set {
		o.set, o.first = true, s
	}
	return o.Value.Set(s)
}

// shortTyped tells whether the command line has the short flag c: a word
// "-c" or "-cVALUE" before any "--".
func shortTyped(args []string, c byte) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if len(a) >= 2 && a[0] == '-' && a[1] == c {
			return true
		}
	}
	return false
}

// onceBool is onceValue for a bool flag, which pflag lets stand alone
// (--json) only when its value says it is a bool.
type onceBool struct{ onceValue }

func (onceBool) IsBoolFlag() bool { return true }

// refuseRepeats makes every flag of the tree that takes one value and has
// a short form refuse a second value when the short form is typed (the
// repeatable ones, --at and other lists, are left alone). args is the
// command line as it will be parsed.
func refuseRepeats(c *cobra.Command, args *[]string) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		t := f.Value.Type()
		if strings.Contains(t, "Slice") || strings.Contains(t, "Array") || t == "count" {
			return
		}
		switch f.Value.(type) {
		case *onceValue, *onceBool:
			return // a flag shared with a parent command
		}
		if f.Shorthand == "" {
			return
		}
		once := onceValue{Value: f.Value, flag: f, args: args}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			f.Value = &onceBool{once}
			return
		}
		f.Value = &once
	})
	for _, sub := range c.Commands() {
		refuseRepeats(sub, args)
	}
}

// flagError is the usage error for a flag the parser refused: a flag
// given twice says so plainly, naming both of its forms.
func flagError(err error) error {
	var ive *pflag.InvalidValueError
	if errors.As(err, &ive) && errors.Is(err, errGivenTwice) {
		f := ive.GetFlag()
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + "/--" + f.Name
		}
		return usageErrorf("%s %s: give it once", name, ive.Unwrap())
	}
	return usageError{err}
}
