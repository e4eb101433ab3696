package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals are the signals that stop a command the way ctrl+c does:
// what was measured is printed and saved, the socket removed. SIGHUP is
// one of them: a closed ssh session or terminal window is the usual way
// a long run ends unattended, and its default action would kill the
// process with nothing printed, saved or removed.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// stopSignal is the cause of a context a signal cancelled (signalContext):
// which signal, so a command can say "terminated" for SIGTERM and
// "interrupted" for ctrl+c instead of "context canceled".
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return s.word() + " (" + s.name() + ")" }

// word is how the stop is told: "terminated" (SIGTERM), "hung up"
// (SIGHUP), "interrupted".
func (s stopSignal) word() string {
	switch s.sig {
	case syscall.SIGTERM:
		return "terminated"
	case syscall.SIGHUP:
		return "hung up"
	}
	return "interrupted"
}

func (s stopSignal) name() string {
	switch s.sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return "SIGINT"
}

// signalContext is a context that SIGINT, SIGTERM or SIGHUP cancels, with
// the signal as its cause (stopSignal). stop lets the signals go again.
func signalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			hungUp(sig)
			cancel(stopSignal{sig})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(context.Canceled)
	}
}

// hungUp, after SIGHUP, ignores SIGPIPE: the reader of a pipe on stdout
// (tee, a pager) is hung up too, and a write to it would otherwise kill
// the process before the partial result is saved; the write fails
// instead, and the save goes on.
func hungUp(sig os.Signal) {
	if sig == syscall.SIGHUP {
		signal.Ignore(syscall.SIGPIPE)
	}
}

// stoppedBy is the signal that cancelled ctx, if one did.
func stoppedBy(ctx context.Context) (stopSignal, bool) {
	var s stopSignal
	ok := errors.As(context.Cause(ctx), &s)
	return s, ok
}
