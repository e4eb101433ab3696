// Package stracetest reads what `strace -c -U name,calls,errors` writes,
// for the tests that check nbdscope's syscall counts against strace's: the
// counter's own (probe/syscount) and a real client's in a sweep
// (interop). One parser and one tolerance, where each had its own.
package stracetest

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Columns are the strace flags that make the table Summary reads: a name,
// its calls and its errors.
var Columns = []string{"-c", "-U", "name,calls,errors"}

// Count is one syscall's line of the table.
type Count struct{ Calls, Errors uint64 }

// Summary is strace's table by syscall name.
type Summary map[string]Count

// Sum adds up the lines of the named syscalls (a direction's calls: recvmsg
// and recvfrom, say); one strace did not see adds nothing.
func (s Summary) Sum(names ...string) Count {
	var c Count
	for _, n := range names {
		c.Calls += s[n].Calls
		c.Errors += s[n].Errors
	}
	return c
}

// Read reads the table strace wrote to path (-o): a header, dashes,
// "NAME CALLS [ERRORS]" lines, dashes, total. A table with no line is an
// error: strace saw nothing, or wrote something else.
func Read(path string) (Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := Summary{}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] == "syscall" || strings.HasPrefix(f[0], "-") || f[0] == "total" {
			continue
		}
		var c Count
		if c.Calls, err = strconv.ParseUint(f[1], 10, 64); err != nil {
			return nil, fmt.Errorf("strace summary line %q: %w", line, err)
		}
		if len(f) > 2 {
			if c.Errors, err = strconv.ParseUint(f[2], 10, 64); err != nil {
				return nil, fmt.Errorf("strace summary line %q: %w", line, err)
			}
		}
		out[f[0]] = c
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("strace summary %s has no calls:\n%s", path, b)
	}
	return out, nil
}

// Within1Pct tells whether two counts agree within 1% of the larger, or
// within one call (two windows that differ by the call that ends one).
func Within1Pct(a, b uint64) bool {
	d := math.Abs(float64(a) - float64(b))
	return d <= 1 || d <= 0.01*float64(max(a, b))
}
