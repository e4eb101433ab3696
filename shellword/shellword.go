// Package shellword splits a command line into words and quotes words
// back as a POSIX shell reads them, expanding nothing. It is a leaf, one
// definition for every place that does either: the real clients' and
// servers' command lines (clientrun, model's validation), the command an
// nbd error suggests, and the lines the tests hand to sh -c and tmux.
package shellword

import (
	"errors"
	"fmt"
	"strings"
)

// plain are the characters sh gives no meaning to in a word that is not
// a command's first ('=' makes a first word an assignment: Join quotes
// that one). '~' is not one (a home directory at a word's start), nor
// anything outside ASCII.
const plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:+,@%="

// Quote returns s as one word for sh: as it is when it is made of plain
// characters only, single-quoted otherwise (an empty word too).
func Quote(s string) string {
	if s != "" && strings.Trim(s, plain) == "" {
		return s
	}
	return QuoteAlways(s)
}

// QuoteAlways single-quotes s, whatever it holds: a value put into a
// command line the user wrote, where it must stay one word.
func QuoteAlways(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes each word and joins them with spaces: a command line sh
// reads back as the same words.
func Join(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
		if i == 0 && strings.Contains(w, "=") {
			q[i] = QuoteAlways(w)
		}
	}
	return strings.Join(q, " ")
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
