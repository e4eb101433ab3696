package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"nbdscope/presets"
)

const presetsLong = `Built-in presets (read-only) and your own. Use one with
'nbdscope --preset NAME', 'nbdscope run --preset NAME' or 'nbdscope sweep --preset NAME'.
--force replaces an existing user preset; without it nothing is overwritten.
User presets are files NAME.json in %s
($NBDSCOPE_HOME/presets when NBDSCOPE_HOME is set).`

// newPresetsCmd is 'nbdscope presets list|show|rm|rename|export|import'.
func newPresetsCmd(a *app) *cobra.Command {
	dir := "your config directory"
	if st, err := a.openStore(); err == nil {
		dir = st.PresetDir
	}
	var force bool
	var out, name string
	list := storeSub("list", "Name, kind (built-in or user) and description", nil, nil, a.withStore(a.presetsList))
	show := storeSub("show NAME", "The preset as indented JSON (the file format)", []string{"NAME"}, a.completePresets,
		a.withStore(func(st *presets.Store, args []string) error { return storeCmdErr(st.ExportPreset(args[0], a.stdout)) }))
	rm := a.rmSub("Remove a user preset", "preset", a.completeUserPresets, (*presets.Store).RemovePreset)
	rename := storeSub("rename OLD NEW [--force]", "Rename a user preset", []string{"OLD", "NEW"}, a.completeUserPresets,
		a.withStore(func(st *presets.Store, args []string) error {
			if err := st.RenamePreset(args[0], args[1], force); err != nil {
				return storeCmdErr(err)
			}
			fmt.Fprintf(a.stdout, "renamed preset %s to %s\n", args[0], args[1])
			return nil
		}))
	rename.ValidArgsFunction = completeArgs(1, a.completeUserPresets)
	rename.Flags().BoolVar(&force, "force", false, "replace an existing preset called NEW")
	export := storeSub("export NAME [-o FILE]", "Write the preset as a file (stdout by default)", []string{"NAME"}, a.completePresets,
		a.withStore(func(st *presets.Store, args []string) error {
			return storeCmdErr(storeCmdOutput(out, a.stdout, func(w io.Writer) error { return st.ExportPreset(args[0], w) }))
		}))
	export.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` instead of stdout")
	imp := storeSub("import FILE|- [--name NAME] [--force]", "Save a preset file as a user preset (- reads stdin)", []string{"FILE"}, nil,
		a.withStore(func(st *presets.Store, args []string) error { return a.presetsImport(st, args[0], name, force) }))
	imp.ValidArgsFunction = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []string{"json"}, cobra.ShellCompDirectiveFilterFileExt
	}
	imp.Flags().StringVar(&name, "name", "", "save under `NAME` instead of the file's name")
	imp.Flags().BoolVar(&force, "force", false, "replace an existing preset of that name")
	return storeGroup("presets", "Presets: list, show, rm, rename, export, import", fmt.Sprintf(presetsLong, dir),
		list, show, rm, rename, export, imp)
}

func (a *app) presetsList(st *presets.Store, _ []string) error {
	ps, errs := st.Presets()
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
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
		fmt.Fprintf(a.stderr, "nbdscope: presets: %v\n", e)
	}
	return nil // the built-ins always load
}

func (a *app) presetsImport(st *presets.Store, file, name string, force bool) error {
	data, err := a.readImport(file)
	if err != nil {
		return err
	}
	if name == "" {
		// A file without a name is named after itself.
		var f struct{ Name string }
		if json.Unmarshal(data, &f) == nil && f.Name == "" && file != "-" {
			name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		}
	}
	p, err := st.ImportPreset(bytes.NewReader(data), name, force)
	if err != nil {
		switch {
		case errors.Is(err, presets.ErrBuiltIn):
			err = fmt.Errorf("%w (or import it with --name NAME)", err)
		case file != "-" && !errors.Is(err, presets.ErrExists) && !errors.Is(err, presets.ErrBadName):
			err = fmt.Errorf("%s: %w", file, err)
		}
		return storeCmdErr(err)
	}
	fmt.Fprintf(a.stdout, "imported preset %s (%s)\n", p.Name, p.File)
	return nil
}

// readImport reads the preset file to import (- is stdin), at most a
// preset file's limit and one byte more: a larger file is refused without
// being read whole. A file that does not exist is a bad argument (exit 2).
func (a *app) readImport(file string) ([]byte, error) {
	r := a.stdin
	if file != "-" {
		f, err := os.Open(file)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usageError{err}
		}
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := presets.ReadPresetData(r)
	if err != nil {
		if file != "-" {
			err = fmt.Errorf("%s: %w", file, err)
		}
		return nil, storeCmdErr(err)
	}
	return data, nil
}
