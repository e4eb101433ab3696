// Package clientrun runs a real NBD client command (qemu-img, nbdcopy,
// blksum …) and measures it the way time(1) and hyperfine do: wall time,
// and the user and system CPU and context switches of the whole process
// tree from wait4's rusage, which includes every descendant the client
// waited for.
package clientrun

import (
	"errors"
	"fmt"
	"strings"
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
		return []string{"/bin/sh", "-c", substitute(c.Line, vars, shellQuote)}, nil
	}
	words, err := Split(c.Line)
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

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// unclosed is Split's error for the quote q at rune i that is never
// closed. It names where, not the line: the caller names the line once,
// with the flag or setting it came in (each said it again).
func unclosed(q rune, i int) error {
	return fmt.Errorf("the %c at character %d opens a quote that is never closed", q, i+1)
}

// Split splits a command line into words as sh would without expanding
// anything: blanks separate words, '…' quotes literally, "…" quotes with
// \" \\ \$ \` escapes, and a backslash outside quotes escapes the next
// character.
func Split(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '\'':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, unclosed('\'', i)
			}
			cur.WriteString(string(rs[i+1 : j]))
			i = j
		case r == '"':
			inWord = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[j+1]) {
					j++
				}
				cur.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, unclosed('"', i)
			}
			i = j
		case r == '\\':
			inWord = true
			if i+1 == len(rs) {
				return nil, fmt.Errorf("the \\ at character %d ends the line, with nothing to quote", i+1)
			}
			i++
			cur.WriteRune(rs[i])
		default:
			inWord = true
			cur.WriteRune(r)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}
