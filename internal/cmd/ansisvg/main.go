// Command ansisvg turns a captured terminal screen (tmux capture-pane -e -p)
// on stdin into an SVG on stdout; docs/screenshot.sh uses it to make the
// README's picture from the real explorer.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"nbdscope/internal/ansisvg"
)

func main() {
	cols := flag.Int("cols", 120, "screen width in cells")
	rows := flag.Int("rows", 36, "screen height in cells")
	flag.Parse()
	if *cols < 1 || *cols > 1000 || *rows < 1 || *rows > 1000 {
		fmt.Fprintln(os.Stderr, "ansisvg: -cols and -rows want 1 to 1000")
		os.Exit(2)
	}
	in, err := io.ReadAll(io.LimitReader(os.Stdin, 16<<20))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ansisvg: reading the screen:", err)
		os.Exit(1)
	}
	if _, err := os.Stdout.WriteString(ansisvg.Render(string(in), *cols, *rows)); err != nil {
		fmt.Fprintln(os.Stderr, "ansisvg:", err)
		os.Exit(1)
	}
}
