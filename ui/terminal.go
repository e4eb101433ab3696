package ui

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"
)

// ownTerminal is the terminal the explorer writes its frames to itself
// (termOut): bubbletea, run without its renderer, only reads the keys
// and runs the model, so the raw mode and the window's size, which its
// renderer set up, are set up here.
type ownTerminal struct {
	in, out *os.File
	saved   *term.State
	out2    *termOut
}

// takeTerminal puts stdin in raw mode and takes the screen; ok is false
// (and nothing changed) where stdin or stdout is not a terminal, where
// bubbletea's renderer is used as before.
func takeTerminal() (t *ownTerminal, ok bool, err error) {
	in, out := os.Stdin, os.Stdout
	if !term.IsTerminal(in.Fd()) || !term.IsTerminal(out.Fd()) {
		return nil, false, nil
	}
	saved, err := term.MakeRaw(in.Fd())
	if err != nil {
		return nil, false, fmt.Errorf("the terminal's raw mode: %w", err)
	}
	t = &ownTerminal{in: in, out: out, saved: saved, out2: &termOut{w: out}}
	if err := t.out2.start(); err != nil {
		_ = term.Restore(in.Fd(), saved)
		return nil, false, fmt.Errorf("the terminal: %w", err)
	}
	return t, true, nil
}

// watchSize sends p the window's size now and at each change (SIGWINCH),
// until done is closed.
func (t *ownTerminal) watchSize(p *tea.Program, done <-chan struct{}) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGWINCH)
	defer signal.Stop(sig)
	for {
		if w, h, err := term.GetSize(t.out.Fd()); err == nil {
			p.Send(tea.WindowSizeMsg{Width: w, Height: h})
		}
		select {
		case <-sig:
		case <-done:
			return
		}
	}
}

// give gives the terminal back as it was.
func (t *ownTerminal) give() error {
	err := t.out2.stop()
	if rerr := term.Restore(t.in.Fd(), t.saved); err == nil && rerr != nil {
		err = fmt.Errorf("the terminal's mode: %w", rerr)
	}
	return err
}
