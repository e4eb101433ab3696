package report

import (
	"nbdscope/model"
	"nbdscope/phrase"
)

// reasonText is why a figure is unknown, in the phrasebook's long form
// with its fix; "" for none.
func reasonText(r *model.Reason) string {
	if r == nil {
		return ""
	}
	return phrase.ReasonWithFix(*r)
}
