package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// stopSignal is the cause of a context a signal cancelled (signalContext):
// which signal, so a command can say "terminated" for SIGTERM and
// "interrupted" for ctrl+c instead of "context canceled".
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return s.word() + " (" + s.name() + ")" }

// word is how the stop is told: "terminated" (SIGTERM), "interrupted".
func (s stopSignal) word() string {
	if s.sig == syscall.SIGTERM {
		return "terminated"
	}
	return "interrupted"
}

func (s stopSignal) name() string {
	if s.sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// signalContext is a context that SIGINT or SIGTERM cancels, with the
// signal as its cause (stopSignal). stop lets the signals go again.
func signalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
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

// stoppedBy is the signal that cancelled ctx, if one did.
func stoppedBy(ctx context.Context) (stopSignal, bool) {
	var s stopSignal
	ok := errors.As(context.Cause(ctx), &s)
	return s, ok
}
