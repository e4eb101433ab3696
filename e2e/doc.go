// Package e2e drives the real nbdscope explorer end to end, the way a user
// does: it builds the binary, runs it in a terminal (a private tmux
// server, so a user's tmux is never touched), reads the screen with
// `tmux capture-pane` and types keys with `tmux send-keys`.
//
// It holds tests only. TestExplorer waits for both sides to move data,
// changes side B's send buffer and connection count from the keyboard,
// reads the new values back from B's panel, quits with q and checks that
// the process exited cleanly and left no child process and no socket
// directory behind, at 80x24 and at 160x48. TestHangup closes the
// terminal (SIGHUP) under a running explorer and checks the same.
// TestNoWordCut scans the screens of the default view, the preset picker,
// the save prompt's error and a side running a real client, at both
// sizes, for words and figures the layout cut short (internal/cutcheck).
//
// Without tmux the tests skip with a message saying so, unless
// NBDSCOPE_INTEROP=1 is set (as on CI), where a missing tmux fails them:
//
//	NBDSCOPE_INTEROP=1 go test -count=1 ./e2e/
//
// The leftover checks read /proc, so they are Linux only; elsewhere they
// are skipped.
package e2e
