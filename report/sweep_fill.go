package report

import (
	"strings"

	"nbdscope/model"
)

// sweepFillLine is the send-buffer fill at each size of a sweep, full/empty
// percent of the samples ("fill (full/empty %): 8k 61/37, 2m 0/87"); ""
// when no row measured it (an exec sweep: the client is not sampled).
func sweepFillLine(rows []model.SweepRow) string {
	var parts []string
	any := false
	for _, r := range rows {
		fl := r.Figures.Fill()
		any = any || fl.Known()
		parts = append(parts, r.Buffer+" "+FillCell(fl))
	}
	if !any {
		return ""
	}
	return "send-buffer fill (full/empty % of samples): " + strings.Join(parts, ", ")
}
