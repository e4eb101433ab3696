package child

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"
)

// errRunGone is why a start gives up when the run's socket directory is
// gone: the controller is stopping (Pair.Stop removes the directory
// before it waits for the sides still starting).
var errRunGone = errors.New("the run ended while it started (its socket directory is gone)")

// runDirEvery is how often a starting child looks for the directory.
const runDirEvery = 50 * time.Millisecond

// whileRunDir returns ctx, cancelled with errRunGone once dir no longer
// exists. It is how the controller cancels a start it has no other way
// to reach: a child is not the controller's to signal or write to until
// it has said it is ready, and a real server that never listens holds
// its child's start for the whole listen timeout (10 s: q after S in the
// explorer waited for it). stop ends the watch.
func whileRunDir(ctx context.Context, dir string) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(runDirEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
					cancel(errRunGone)
					return
				}
			}
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}
