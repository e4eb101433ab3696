package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"nbdscope/engine"
	"nbdscope/presets"
)

func init() {
	extraCommands["presets"] = func(args []string) error {
		return cmdPresets(args, os.Stdin, os.Stdout, os.Stderr)
	}

	// Wire the presets store into the hooks of the other commands:
	// --preset NAME (TUI, run, sweep), sweep --preset's sweep definition,
	// and run --save NAME.
	presetConfig = func(name string) (engine.Config, error) {
		if name == "" {
			return engine.DefaultConfig(), nil
		}
		p, err := storeCmdPreset(name)
		return p.Config, err
	}
	sweepSpecFor = func(name string) (*engine.SweepSpec, error) {
		if name == "" {
			return nil, nil
		}
		p, err := storeCmdPreset(name)
		return p.Sweep, err
	}
	checkRunName = func(name string, force bool) error {
		st, err := presets.DefaultStore()
		if err != nil {
			return err
		}
		return storeCmdErr(st.CheckRunName(name, force))
	}
	saveRun = func(name string, rep engine.Report, force bool) error {
		st, err := presets.DefaultStore()
		if err != nil {
			return err
		}
		return storeCmdErr(st.SaveRun(name, rep, force))
	}
}

// storeCmdPreset looks a preset up in the default store.
func storeCmdPreset(name string) (presets.Preset, error) {
	st, err := presets.DefaultStore()
	if err != nil {
		return presets.Preset{}, err
	}
	p, err := st.Preset(name)
	if errors.Is(err, presets.ErrNotFound) {
		err = fmt.Errorf("%w (see 'nbdscope presets list')", err)
	}
	return p, storeCmdErr(err)
}

const presetsUsage = `Usage: nbdscope presets COMMAND [ARGS]

Built-in presets (read-only) and your own. Use one with
'nbdscope --preset NAME', 'nbdscope run --preset NAME' or 'nbdscope sweep --preset NAME'.

Commands:
  list                                  name, kind (built-in or user) and description
  show NAME                             the preset as indented JSON (the file format)
  rm NAME                               remove a user preset
  rename OLD NEW [--force]              rename a user preset
  export NAME [-o FILE]                 write the preset as a file (stdout by default)
  import FILE|- [--name NAME] [--force] save a preset file as a user preset (- reads stdin)

--force replaces an existing user preset; without it nothing is overwritten.
User presets are files NAME.json in %s
($NBDSCOPE_HOME/presets when NBDSCOPE_HOME is set).
`

// cmdPresets runs 'nbdscope presets …'.
func cmdPresets(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageErrorf("presets: want a command: list, show, rm, rename, export or import (see 'nbdscope presets help')")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "help", "-h", "-help", "--help":
		dir := "your config directory"
		if st, err := presets.DefaultStore(); err == nil {
			dir = st.PresetDir
		}
		fmt.Fprintf(stdout, presetsUsage, dir)
		return nil
	}
	fs := flag.NewFlagSet("presets "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var force bool
	var out, name string
	var pos []string
	var err error
	switch sub {
	case "list":
		fs.Usage = func() { fmt.Fprintln(stderr, "Usage: nbdscope presets list") }
		err = parseFlags(fs, rest)
	case "show", "rm":
		fs.Usage = func() { fmt.Fprintf(stderr, "Usage: nbdscope presets %s NAME\n", sub) }
		pos, err = storeCmdArgs(fs, rest, "NAME")
	case "rename":
		fs.BoolVar(&force, "force", false, "replace an existing preset called NEW")
		fs.Usage = func() { fmt.Fprintln(stderr, "Usage: nbdscope presets rename OLD NEW [--force]"); fs.PrintDefaults() }
		pos, err = storeCmdArgs(fs, rest, "OLD", "NEW")
	case "export":
		fs.StringVar(&out, "o", "", "write to `FILE` instead of stdout")
		fs.Usage = func() { fmt.Fprintln(stderr, "Usage: nbdscope presets export NAME [-o FILE]"); fs.PrintDefaults() }
		pos, err = storeCmdArgs(fs, rest, "NAME")
	case "import":
		fs.StringVar(&name, "name", "", "save under `NAME` instead of the file's name")
		fs.BoolVar(&force, "force", false, "replace an existing preset of that name")
		fs.Usage = func() {
			fmt.Fprintln(stderr, "Usage: nbdscope presets import FILE|- [--name NAME] [--force]")
			fs.PrintDefaults()
		}
		pos, err = storeCmdArgs(fs, rest, "FILE")
	default:
		return usageErrorf("presets: unknown command %q: want list, show, rm, rename, export or import", sub)
	}
	if err != nil {
		return err
	}

	st, err := presets.DefaultStore()
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		ps, errs := st.Presets()
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tKIND\tDESCRIPTION")
		for _, p := range ps {
			kind := "user"
			if p.BuiltIn {
				kind = "built-in"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, kind, p.Description)
		}
		tw.Flush()
		for _, e := range errs {
			fmt.Fprintf(stderr, "nbdscope: presets: %v\n", e)
		}
		return nil // the built-ins always load
	case "show":
		return storeCmdErr(st.ExportPreset(pos[0], stdout))
	case "rm":
		if err := st.RemovePreset(pos[0]); err != nil {
			return storeCmdErr(err)
		}
		fmt.Fprintf(stdout, "removed preset %s\n", pos[0])
	case "rename":
		if err := st.RenamePreset(pos[0], pos[1], force); err != nil {
			return storeCmdErr(err)
		}
		fmt.Fprintf(stdout, "renamed preset %s to %s\n", pos[0], pos[1])
	case "export":
		return storeCmdErr(storeCmdOutput(out, stdout, func(w io.Writer) error { return st.ExportPreset(pos[0], w) }))
	case "import":
		var data []byte
		if pos[0] == "-" {
			data, err = io.ReadAll(io.LimitReader(stdin, 1<<20+1))
		} else {
			data, err = os.ReadFile(pos[0])
		}
		if err != nil {
			return err
		}
		if name == "" {
			// A file without a name is named after itself.
			var f struct{ Name string }
			if json.Unmarshal(data, &f) == nil && f.Name == "" && pos[0] != "-" {
				name = strings.TrimSuffix(filepath.Base(pos[0]), filepath.Ext(pos[0]))
			}
		}
		p, err := st.ImportPreset(bytes.NewReader(data), name, force)
		if err != nil {
			switch {
			case errors.Is(err, presets.ErrBuiltIn):
				err = fmt.Errorf("%w (or import it with --name NAME)", err)
			case pos[0] != "-" && !errors.Is(err, presets.ErrExists) && !errors.Is(err, presets.ErrBadName):
				err = fmt.Errorf("%s: %w", pos[0], err)
			}
			return storeCmdErr(err)
		}
		fmt.Fprintf(stdout, "imported preset %s (%s)\n", p.Name, p.File)
	}
	return nil
}

// storeCmdArgs parses flags that may come before, between or after positional
// arguments ("rename OLD NEW --force") and returns the positional ones,
// which must be as many as names (named in the usage error otherwise).
// After "--" everything is positional.
func storeCmdArgs(fs *flag.FlagSet, args []string, names ...string) ([]string, error) {
	pos, err := parseStoreCmdArgs(fs, args)
	if err == nil && len(pos) != len(names) {
		return nil, usageErrorf("%s: want %s", fs.Name(), strings.Join(names, " "))
	}
	return pos, err
}

func parseStoreCmdArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err}
		}
		consumed := len(args) - fs.NArg()
		rest := fs.Args()
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// storeCmdErr turns store errors into command errors: a bad name is bad usage
// (exit 2); an existing name says how to replace it.
func storeCmdErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, presets.ErrBadName):
		return usageError{err}
	case errors.Is(err, presets.ErrExists):
		return fmt.Errorf("%w (use --force to replace it)", err)
	}
	return err
}

// storeCmdOutput writes with write to stdout, or to the file path (created 0644,
// replaced whole) when path is set and not "-".
func storeCmdOutput(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(stdout)
	}
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
