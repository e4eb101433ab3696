package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// A command's result can go to several places at once, as hyperfine's
// --export-* do: one format to stdout (--json, --csv, --markdown, or an
// --export-FORMAT -), and any number of files (--export-FORMAT FILE).
// Every file is checked before the load starts, so a typo costs nothing;
// a write that fails after the measurement does not stop the others.

// Output formats.
const (
	fmtText       = "text" // the command's table for people (the default on stdout)
	fmtJSON       = "json"
	fmtCSV        = "csv"
	fmtMarkdown   = "markdown"
	fmtHyperfine  = "hyperfine"
	fmtJSONStream = "json-stream"
)

// exportHelp is each --export-FORMAT flag's help.
var exportHelp = map[string]string{
	fmtJSON:      "also write the JSON to `FILE` (- for stdout)",
	fmtCSV:       "also write the CSV to `FILE` (- for stdout)",
	fmtMarkdown:  "also write the markdown to `FILE` (- for stdout)",
	fmtHyperfine: "also write hyperfine's --export-json layout to `FILE` (- for stdout): a result per size, its times the measurements, for hyperfine's scripts",
}

// exportFlags are a command's --export-FORMAT flags, in the order added.
type exportFlags struct {
	formats []string
	paths   map[string]*string
}

// addExportFlags adds --export-FORMAT FILE for each format.
func addExportFlags(cmd *cobra.Command, formats ...string) *exportFlags {
	ex := &exportFlags{formats: formats, paths: map[string]*string{}}
	for _, f := range formats {
		p := new(string)
		ex.paths[f] = p
		cmd.Flags().StringVar(p, "export-"+f, "", exportHelp[f])
	}
	return ex
}

// destination is one output: a format, the flag that asked for it ("" for
// the default) and its file ("" for stdout).
type destination struct {
	format, flag, path string
}

// stdoutChoice is a flag that sends a format to stdout (--json, --csv).
type stdoutChoice struct {
	flag, format string
}

// plan is where the command's outputs go: at most one to stdout (none
// asked: fmtText), each file named once and writable. Bad usage (exit 2)
// otherwise, naming the flags.
func (ex *exportFlags) plan(cmd *cobra.Command, choices ...stdoutChoice) ([]destination, error) {
	var outs []destination
	var toStdout []string
	for _, c := range choices {
		if cmd.Flags().Changed(c.flag) {
			outs = append(outs, destination{format: c.format, flag: "--" + c.flag})
			toStdout = append(toStdout, "--"+c.flag)
		}
	}
	files := map[string]string{} // absolute path → flag
	for _, f := range ex.formats {
		name := "export-" + f
		if !cmd.Flags().Changed(name) {
			continue
		}
		path := *ex.paths[f]
		switch path {
		case "":
			return nil, usageErrorf("--%s: want a FILE (or - for stdout)", name)
		case "-":
			outs = append(outs, destination{format: f, flag: "--" + name})
			toStdout = append(toStdout, "--"+name+" -")
			continue
		}
		if err := sameFile(files, path, "--"+name); err != nil {
			return nil, err
		}
		if err := checkWritable(path); err != nil {
			return nil, usageErrorf("--%s %s: %v", name, path, err)
		}
		outs = append(outs, destination{format: f, flag: "--" + name, path: path})
	}
	if len(toStdout) > 1 {
		return nil, usageErrorf("%s: both write to stdout; at most one output can (give the others a FILE)", strings.Join(toStdout, " and "))
	}
	if len(toStdout) == 0 {
		outs = append([]destination{{format: fmtText}}, outs...)
	}
	return outs, nil
}

// sameFile refuses a file that an earlier flag already names (by its
// absolute path, or, for files that exist, the same file by another name).
func sameFile(files map[string]string, path, flag string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return usageErrorf("%s %s: %v", flag, path, err)
	}
	for other, otherFlag := range files {
		fi1, err1 := os.Stat(other)
		fi2, err2 := os.Stat(abs)
		if other == abs || err1 == nil && err2 == nil && os.SameFile(fi1, fi2) {
			return usageErrorf("%s and %s name the same file %s: each output needs a file of its own", otherFlag, flag, path)
		}
	}
	files[abs] = flag
	return nil
}

// checkWritable tells whether path can be written, without changing a
// file that is there: an existing file is opened for writing (not
// truncated), a new one created and removed again.
func checkWritable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return errors.New("is a directory")
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return unwrapPath(err)
		}
		return f.Close()
	case !errors.Is(err, os.ErrNotExist):
		return unwrapPath(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return unwrapPath(err)
	}
	f.Close()
	return os.Remove(path)
}

// unwrapPath is a path error's reason alone (the flag already names the
// file).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeOutputs writes each destination with write. A destination that
// fails does not stop the others; the failures come back together, as a
// failure (exit 1) naming each flag and file: what was measured is in
// every output that could be written.
func (a *app) writeOutputs(outs []destination, write func(format string, w io.Writer) error) error {
	var errs []string
	for _, d := range outs {
		if d.path == "" {
			if err := write(d.format, a.stdout); err != nil {
				errs = append(errs, fmt.Sprintf("writing stdout: %v", err))
			}
			continue
		}
		if err := writeFile(d.path, func(w io.Writer) error { return write(d.format, w) }); err != nil {
			errs = append(errs, fmt.Sprintf("%s %s: %v", d.flag, d.path, err))
		} else {
			fmt.Fprintf(a.stderr, "nbdscope: %s written to %s\n", d.format, d.path)
		}
	}
	if len(errs) > 0 {
		return exitError{exitFailure, errors.New(strings.Join(errs, "; "))}
	}
	return nil
}

// writeFile writes a file whole: created or truncated, written, closed
// (a close that fails, as on a full NFS mount, is a failed write).
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return unwrapPath(err)
	}
	if err := write(f); err != nil {
		f.Close()
		return unwrapPath(err)
	}
	return unwrapPath(f.Close())
}

// stdoutFormat is the format that goes to stdout ("" when none does).
func stdoutFormat(outs []destination) string {
	for _, d := range outs {
		if d.path == "" {
			return d.format
		}
	}
	return ""
}
