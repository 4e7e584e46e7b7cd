package oltp

import (
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"benchmatrix/engine"
)

// Latencies are recorded in microseconds, from 1 µs to 100 s with 3
// significant figures (engine.NewHist). Longer events clamp to 100 s in the
// histogram; min, max, avg and sum stay exact because they come from the
// workers' nanosecond timers, not from the histogram.
const (
	histLowestUS  = 1
	histHighestUS = 100 * 1000 * 1000
)

// nsToHistUS converts an event latency to the histogram's unit, clamped
// to its range.
func nsToHistUS(ns int64) int64 {
	us := (ns + 500) / 1000
	if us < histLowestUS {
		return histLowestUS
	}
	if us > histHighestUS {
		return histHighestUS
	}
	return us
}

// tally is what a set of events added up to (engine.Tally) and the open
// loop's own figures.
type tally struct {
	engine.Tally
	late, dropped int64
	dispatch      DelayHist // open loop: the client's own delays (clientdelay.go)
}

func newTally() tally { return tally{Tally: engine.Tally{Hist: engine.NewHist()}} }

// recordEvent adds one finished event of latency ns.
func (t *tally) recordEvent(ns int64) {
	if t.Events == 0 || ns < t.LatMin {
		t.LatMin = ns
	}
	if ns > t.LatMax {
		t.LatMax = ns
	}
	t.Events++
	t.LatSum += ns
	_ = t.Hist.RecordValue(nsToHistUS(ns)) // clamped: cannot fail
}

// add merges o into t, histogram included (when o has one).
func (t *tally) add(o *tally) {
	t.Tally.Add(&o.Tally)
	t.late += o.late
	t.dropped += o.dropped
	t.dispatch.merge(&o.dispatch)
}

// clearCounts zeroes the counters, keeping the histogram.
func (t *tally) clearCounts() {
	*t = tally{Tally: engine.Tally{Hist: t.Hist}}
}

// histogramBars lists the non-empty buckets as (upper bound ms, count).
func histogramBars(h *hdrhistogram.Histogram) [][2]float64 {
	var out [][2]float64
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out = append(out, [2]float64{float64(b.To) / 1000, float64(b.Count)})
		}
	}
	return out
}
