package main

import (
	"errors"
	"fmt"
)

// Exit statuses, the same for every command (design.md, the README's
// "Exit status" and --help say so too).
const (
	exitOK          = 0
	exitFailure     = 1   // a failure, or a side of the run crashed
	exitUsage       = 2   // bad flags or arguments
	exitInterrupted = 130 // stopped by ctrl+c (or SIGTERM), as shells report SIGINT
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

// exitStatusHelp is the exit-status paragraph of every command's help.
const exitStatusHelp = `Exit status: 0 ok; 1 failure or a crashed side; 2 bad usage; 130 interrupted.`

// usageError marks bad flags or arguments (exit status 2).
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

func usageErrorf(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}
