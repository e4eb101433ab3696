package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"

	"nbdscope/model"
	"nbdscope/presets"
	"nbdscope/report"
)

// app is what every command works with: the standard streams and the
// presets/runs store. Commands get it as a value from newRootCmd instead of
// reaching for globals, so a test can run the whole tree against its own
// streams and NBDSCOPE_HOME.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// openStore opens the presets and runs store (presets.DefaultStore);
	// it is called when a command needs it, after NBDSCOPE_HOME is read.
	openStore func() (*presets.Store, error)
	// args is the command line being run (execute), for the check of a
	// short flag given twice (shortflags.go).
	args []string
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *app {
	return &app{stdin: stdin, stdout: stdout, stderr: stderr, openStore: presets.DefaultStore}
}

// execute runs one command line and returns the exit status; errors are
// printed on stderr, prefixed "nbdscope:".
func (a *app) execute(args []string) int {
	report.SetRateUnit(nil) // --rate-unit is one command line's (report/rate_unit.go)
	a.args = args
	root := newRootCmd(a)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		// An error that names its command by its path ("nbdscope doctor: …")
		// already starts with the program's name: print it once.
		fmt.Fprintf(a.stderr, "nbdscope: %s\n", strings.TrimPrefix(err.Error(), "nbdscope "))
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(a.stderr, "Run 'nbdscope help' or 'nbdscope COMMAND --help' for usage.")
		}
	}
	return exitCode(err)
}

// isTerminal tells whether w is a terminal (progress bars, colours and the
// sweep's bars are for people, not pipes).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// preset looks a preset up in the store.
func (a *app) preset(name string) (presets.Preset, error) {
	st, err := a.openStore()
	if err != nil {
		return presets.Preset{}, err
	}
	p, err := st.Preset(name)
	if errors.Is(err, presets.ErrNotFound) {
		err = fmt.Errorf("%w (see 'nbdscope presets list')", err)
	}
	return p, storeCmdErr(err)
}

// presetConfig is a preset's configuration; "" is the built-in default.
func (a *app) presetConfig(name string) (model.Config, error) {
	if name == "" {
		return model.DefaultConfig(), nil
	}
	p, err := a.preset(name)
	return p.Config, err
}

// livePresetConfig is presetConfig for run and the explorer, which refuse
// a preset that sweeps a real client: its configuration is only the
// sweep's server, so they would quietly run our load instead of the
// client.
func (a *app) livePresetConfig(name string) (model.Config, error) {
	if name == "" {
		return model.DefaultConfig(), nil
	}
	p, err := a.preset(name)
	if err == nil && p.SweepsClient() {
		return model.Config{}, usageErrorf("preset %q sweeps a real client (%s): run it with 'nbdscope sweep --preset %s', "+
			"or make the client a side's live load with --exec-b 'CMD'", name, p.Sweep.Exec.Command, name)
	}
	return p.Config, err
}

// sweepSpec is a preset's sweep definition (nil when it has none).
func (a *app) sweepSpec(name string) (*model.SweepSpec, error) {
	if name == "" {
		return nil, nil
	}
	p, err := a.preset(name)
	return p.Sweep, err
}

// checkRunName refuses, before anything runs, a run name that is invalid
// or taken (without force), or a store that cannot be written: all bad
// usage (exit 2), as nothing has run yet.
func (a *app) checkRunName(name string, force bool) error {
	st, err := a.openStore()
	if err == nil {
		err = st.CheckRunName(name, force)
	}
	if err = storeCmdErr(err); err != nil && !errors.As(err, new(usageError)) {
		err = usageError{err}
	}
	return err
}

// saveOutcome is the error a command ends with when saving its result
// failed after the result was printed: exit 1, whatever the result was
// (a failure to keep what was measured outweighs an interruption).
func saveOutcome(saveErr, outcome error) error {
	if outcome != nil {
		saveErr = fmt.Errorf("%w (and %v)", saveErr, outcome)
	}
	return exitError{exitFailure, saveErr}
}

// saveRun stores a finished run under name.
func (a *app) saveRun(name string, rep model.Report, force bool) error {
	st, err := a.openStore()
	if err != nil {
		return err
	}
	return storeCmdErr(st.SaveRun(name, rep, force))
}

// storeCmdErr turns store errors into command errors. A name that is
// invalid, unknown, taken (without --force) or a read-only built-in is a
// bad value: nothing was done, so it is bad usage (exit 2), as a preset
// file that is not a valid preset is. What fails while doing the work (a
// write, a broken stored file) stays a failure (exit 1).
func storeCmdErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, presets.ErrExists):
		return usageError{fmt.Errorf("%w (use --force to replace it)", err)}
	case errors.Is(err, presets.ErrBadName), errors.Is(err, presets.ErrNotFound),
		errors.Is(err, presets.ErrBuiltIn), errors.Is(err, presets.ErrInvalid):
		return usageError{err}
	}
	return err
}
