package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses, the same for every command (design.md, docs/cli.md's
// "Exit status" and --help say so too).
const (
	exitOK          = 0
	exitFailure     = 1   // a failure, or a side of the run crashed
	exitUsage       = 2   // bad flags or arguments
	exitInterrupted = 130 // stopped by ctrl+c (or SIGTERM, SIGHUP), as shells report SIGINT
)

// exitError is a command's error that stands for a particular exit status:
// run and sweep return it for a crashed side (exitFailure) or an
// interruption (exitInterrupted), after printing what they had.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// exitCode is the exit status for a command's error.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var xe exitError
	if errors.As(err, &xe) {
		return xe.code
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}

// exitMeaning is one exit status a command returns and what it means there.
type exitMeaning struct {
	code    int
	meaning string
}

// exitsAnnotation names a command's entry in exitTables; a command without
// one returns the common statuses.
const exitsAnnotation = "nbdscope_exits"

// The commands' kinds of exit table (exitTables' keys).
const (
	exitsCommon   = ""         // every command but the ones below
	exitsMeasure  = "measure"  // run, sweep: a crash or a signal leaves a partial result
	exitsServe    = "serve"    // a signal is its normal end
	exitsExplorer = "explorer" // a signal ends it like q
)

const usageMeaning = "bad usage: a bad flag, value or name; nothing was run"

// exitTables are the statuses each kind of command returns; its --help
// prints its own (exitStatusLine), and docs/cli.md's table is their union.
var exitTables = map[string][]exitMeaning{
	exitsCommon: {{exitOK, "ok"}, {exitFailure, "failure"}, {exitUsage, usageMeaning}},
	exitsMeasure: {{exitOK, "ok"}, {exitFailure, "failure, or a side crashed (the partial result is printed)"}, {exitUsage, usageMeaning},
		{exitInterrupted, "interrupted by ctrl+c, SIGTERM or SIGHUP (the partial result is printed)"}},
	exitsServe:    {{exitOK, "stopped by SIGINT, SIGTERM or SIGHUP (as qemu-nbd)"}, {exitFailure, "failure"}, {exitUsage, usageMeaning}},
	exitsExplorer: {{exitOK, "quit (q, ctrl+c, SIGINT or SIGTERM)"}, {exitFailure, "failure"}, {exitUsage, usageMeaning}},
}

// setExits gives cmd the exit table of kind (an exitTables key).
func setExits(cmd *cobra.Command, kind string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[exitsAnnotation] = kind
}

// exitsOf is the exit table of cmd.
func exitsOf(cmd *cobra.Command) []exitMeaning {
	return exitTables[cmd.Annotations[exitsAnnotation]]
}

// exitStatusLine is the exit-status table of cmd's help, a status a line.
func exitStatusLine(cmd *cobra.Command) string {
	var b strings.Builder
	b.WriteString("Exit status:")
	for _, e := range exitsOf(cmd) {
		fmt.Fprintf(&b, "\n  %-3d  %s", e.code, e.meaning)
	}
	return b.String()
}

// usageError marks bad flags or arguments (exit status 2).
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

func usageErrorf(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}
