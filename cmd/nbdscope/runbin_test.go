package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

// runBin runs a command line as a process of this binary (TestMain runs
// it as nbdscope), killed after a minute: for commands that, should they
// wrongly accept their input, would serve or run on (serve does until a
// signal). It returns the exit status (-1 when killed) and the output.
func runBin(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), asBinaryEnv+"=1")
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	cmd.SysProcAttr = childAttrs()
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%q: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Errorf("%q still ran after a minute: killed", args)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errs.String()
}
