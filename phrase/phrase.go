// Package phrase is nbdscope's phrasebook: every warning, every reason a
// figure is unknown, and every change event is worded here, once, in a
// short form (the explorer's panel and status line, chart labels) and a
// long form (reports, run's warnings, the JSON's text for readers without
// nbdscope). The model holds kinds and typed parameters and imports no
// words; ui, report, plot and the commands import this package.
//
// Adding a warning or a reason is its kind in the model and its case
// here: a test fails on a kind either form leaves empty, or words alike.
package phrase

import (
	"path/filepath"
	"strconv"
	"strings"

	"nbdscope/model"
	"nbdscope/shellword"
)

func init() { model.SetWording(phrasebook{}) }

// phrasebook words the JSON's text fields for the model (model.SetWording).
type phrasebook struct{}

func (phrasebook) ReasonLong(r model.Reason) string   { return ReasonLong(r) }
func (phrasebook) WarningLong(w model.Warning) string { return WarningLong(w) }
func (phrasebook) WarningFix(w model.Warning) string  { return WarningFix(w) }

// CountOf is n of noun, in the plural but for one: "1 socket", "4 sockets".
func CountOf(n int, noun string) string {
	return strconv.Itoa(n) + " " + Plural(n, noun)
}

// Plural is noun for n of it: "sample" for 1, "samples" otherwise.
func Plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// Program is a command line's program, as sh would run it and without
// its directory: "qemu-nbd" for "/usr/bin/qemu-nbd -r 'a b.img'"; the
// whole line when it does not split (an unclosed quote), "" for none.
func Program(command string) string {
	w, err := shellword.Split(command)
	if err != nil {
		w = strings.Fields(command)
	}
	if len(w) == 0 {
		return ""
	}
	return filepath.Base(w[0])
}

// sideName is how a warning names its side: "side B: ", "" for the pair.
func sideName(s model.SideID) string {
	if s.Index() < 0 {
		return ""
	}
	return "side " + string(s) + ": "
}
