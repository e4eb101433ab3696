// Package clientrun runs a real NBD client command (qemu-img, nbdcopy,
// blksum …) and measures it the way time(1) and hyperfine do: wall time,
// and the user and system CPU and context switches of the whole process
// tree from wait4's rusage, which includes every descendant the client
// waited for.
package clientrun

import (
	"errors"
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
