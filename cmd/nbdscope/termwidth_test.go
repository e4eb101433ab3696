package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Output that is not a terminal gets 80 columns, whatever $COLUMNS says.
func TestTerminalWidthNotATerminal(t *testing.T) {
	t.Setenv("COLUMNS", "200")
	if w := terminalWidth(&bytes.Buffer{}); w != defaultWidth {
		t.Errorf("buffer: width %d, want %d", w, defaultWidth)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if w := terminalWidth(f); w != defaultWidth {
		t.Errorf("file: width %d, want %d", w, defaultWidth)
	}
}
