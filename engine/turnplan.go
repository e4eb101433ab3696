package engine

import (
	"cmp"
	"slices"
	"time"

	"nbdscope/model"
)

// hold is a stretch of the run's clock in which alternate mode keeps the
// turn on one side, whatever the slice says: a scripted change of that side
// falls in its middle.
type hold struct {
	side     int
	from, to time.Duration
}

// planHolds reserves the turns around a run's scripted side changes, so
// that each changed side has a whole turn of samples with the setting
// before the change and a whole one after: it holds the turn from a slice
// and two samples before the change's time (the turn passes at a sample's
// tick, and the other side's pause takes a while) until a slice after it. Left to the slice, a change could land
// just after its side's turn began (qemu-nbd's B at 2.8 s for a change at
// 3 s), leaving it one sample before, the mixed one, and a "before" of 0
// bytes. A hold that cannot be whole (too near the start or the end, or
// against the other side's) is cut, and said: the problems are the run's
// warnings.
func planHolds(script []model.Change, slice, interval, dur time.Duration) (holds []hold, problems []model.Warning) {
	var changes []model.Change
	for _, ch := range script {
		if _, pair := pairSetter(ch); !pair && ch.Setting != nil {
			changes = append(changes, ch)
		}
	}
	slices.SortStableFunc(changes, func(a, b model.Change) int { return cmp.Compare(a.At.D(), b.At.D()) })
	for _, ch := range changes {
		at := ch.At.D()
		h := hold{side: ch.Side, from: at - slice - 2*interval, to: at + slice}
		name := model.SideAt(ch.Side)
		cut := func(by string, other model.SideID) {
			problems = append(problems, model.Warn(name, model.TurnsNotWhole{At: at.Seconds(), Turn: slice.Seconds(), Cut: by, Other: other}))
		}
		if h.from < 0 {
			h.from = 0
			cut(model.CutByStart, "")
		}
		if dur > 0 && h.to > dur {
			cut(model.CutByEnd, "")
		}
		if n := len(holds); n > 0 && holds[n-1].to > h.from {
			last := &holds[n-1]
			if last.side == h.side {
				last.to = max(last.to, h.to) // one stretch of the side's
				continue
			}
			cut(model.CutByOther, model.SideAt(last.side))
			mid := (last.to + h.from) / 2
			last.to, h.from = mid, mid
		}
		holds = append(holds, h)
	}
	return holds, problems
}

// heldBy is the side a hold gives the turn to at the run's time at, if any.
func heldBy(holds []hold, at time.Duration) (int, bool) {
	for _, h := range holds {
		if at >= h.from && at < h.to {
			return h.side, true
		}
	}
	return 0, false
}
