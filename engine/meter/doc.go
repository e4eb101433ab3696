// Package meter is a side's accounting, with no process of its own:
// readings of a side's load and server counters go in (Reading), and
// samples, the current turn's figures, the segments of unchanged
// settings and the run's summary come out, all added by one accumulator
// (totals). The engine polls the children and hands the meter what they
// said; the meter never calls a child, reads /proc or sleeps, so it is
// tested with recorded readings alone.
//
// A Meter is not safe for concurrent use: its side's lock guards it.
package meter
