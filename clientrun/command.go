// Package clientrun runs a real NBD client command (qemu-img, nbdcopy,
// blksum …) and measures it the way time(1) and hyperfine do: wall time,
// and the user and system CPU and context switches of the whole process
// tree from wait4's rusage, which includes every descendant the client
// waited for.
package clientrun

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"nbdscope/shellword"
)

// Vars are the placeholders a command may use; each {name} is replaced by
// its value.
type Vars map[string]string

// Command is a client command line as the user gave it.
type Command struct {
	Line  string // the command, with {uri}, {socket}, {size} placeholders
	Shell bool   // run through /bin/sh -c instead of split into words
}

// Argv is the argument vector to execute with the placeholders replaced:
// the line split into words (quotes and backslashes as sh treats them, no
// expansions) or, with Shell, sh -c and the line with each value
// single-quoted so a socket path can hold any character.
func (c Command) Argv(vars Vars) ([]string, error) {
	if strings.TrimSpace(c.Line) == "" {
		return nil, errors.New("empty command")
	}
	if c.Shell {
		return []string{"/bin/sh", "-c", substitute(c.Line, vars, shellword.QuoteAlways)}, nil
	}
	words, err := shellword.Split(c.Line)
	if err != nil {
		return nil, err
	}
	for i, w := range words {
		words[i] = substitute(w, vars, func(s string) string { return s })
	}
	return words, nil
}

// substitute replaces each {name} of vars in s by quote(value); other
// braces (a JSON filename) are left alone.
func substitute(s string, vars Vars, quote func(string) string) string {
	pairs := make([]string, 0, 2*len(vars))
	for k, v := range vars {
		pairs = append(pairs, "{"+k+"}", quote(v))
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// CheckProgram refuses, before anything runs, a command whose program
// cannot be run: not on PATH, or (a path) not an executable file. A
// --shell command (c.Shell) is not checked: sh runs its line, whose first
// word may be a builtin, a function, a variable assignment or a program
// found only once an earlier part of the line has run, which only sh can
// tell.
func (c Command) CheckProgram() error {
	if c.Shell {
		return nil
	}
	words, err := shellword.Split(c.Line)
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return errors.New("empty command")
	}
	if _, err := exec.LookPath(words[0]); err != nil {
		if strings.Contains(words[0], "/") {
			return fmt.Errorf("%s is not an executable file", shellword.Quote(words[0]))
		}
		return fmt.Errorf("%s is not on PATH", shellword.Quote(words[0]))
	}
	return nil
}

// NeedsOne refuses a command line that holds none of placeholders (the
// ways it can be told where to connect or listen), naming them.
func NeedsOne(line string, placeholders ...string) error {
	for _, p := range placeholders {
		if strings.Contains(line, p) {
			return nil
		}
	}
	return fmt.Errorf("put %s where the command takes the address", strings.Join(placeholders, " or "))
}
