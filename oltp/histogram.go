package oltp

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds, from 1 µs to 100 s with 3
// significant figures (≈147 KiB per histogram). Longer events clamp to
// 100 s in the histogram; min, max, avg and sum stay exact because they come
// from the workers' nanosecond timers, not from the histogram.
const (
	histLowestUS  = 1
	histHighestUS = 100 * 1000 * 1000
	histSigFigs   = 3
)

func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowestUS, histHighestUS, histSigFigs)
}

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

// tally is what a set of events added up to: counters, exact latency
// min/max/sum in nanoseconds, and the latency histogram.
type tally struct {
	events, reads, writes, others int64
	errors, reconnects            int64
	late, dropped                 int64
	latSum, latMin, latMax        int64 // ns; latMin is valid when events > 0
	hist                          *hdrhistogram.Histogram
	dispatch                      DelayHist // open loop: the client's own delays (clientdelay.go)
}

func newTally() tally { return tally{hist: newHist()} }

// recordEvent adds one finished event of latency ns.
func (t *tally) recordEvent(ns int64) {
	if t.events == 0 || ns < t.latMin {
		t.latMin = ns
	}
	if ns > t.latMax {
		t.latMax = ns
	}
	t.events++
	t.latSum += ns
	_ = t.hist.RecordValue(nsToHistUS(ns)) // clamped: cannot fail
}

// addCounts adds o's counters and exact latency figures (not the
// histogram) to t.
func (t *tally) addCounts(o *tally) {
	if o.events > 0 {
		if t.events == 0 || o.latMin < t.latMin {
			t.latMin = o.latMin
		}
		if o.latMax > t.latMax {
			t.latMax = o.latMax
		}
	}
	t.events += o.events
	t.reads += o.reads
	t.writes += o.writes
	t.others += o.others
	t.errors += o.errors
	t.reconnects += o.reconnects
	t.late += o.late
	t.dropped += o.dropped
	t.latSum += o.latSum
	t.dispatch.merge(&o.dispatch)
}

// add merges o into t, histogram included.
func (t *tally) add(o *tally) {
	t.addCounts(o)
	if o.hist != nil && o.hist.TotalCount() > 0 {
		t.hist.Merge(o.hist)
	}
}

// clearCounts zeroes the counters, keeping the histogram.
func (t *tally) clearCounts() {
	h := t.hist
	*t = tally{hist: h}
}

// pctMS is the latency at percentile p (0..100) in milliseconds, 0 when
// empty or p is 0.
func pctMS(h *hdrhistogram.Histogram, p float64) float64 {
	if p <= 0 || h.TotalCount() == 0 {
		return 0
	}
	// The value is the top of its bucket, at most 0.1% above the truth
	// (sysbench's buckets are 1.8% wide and it reports their centres).
	v := h.ValueAtQuantile(math.Min(p, 100))
	return float64(v) / 1000
}

func nsToMS(ns int64) float64 { return float64(ns) / 1e6 }

// latency is the exact-plus-histogram summary of a tally.
func (t *tally) latency(pct float64) Latency {
	if t.events == 0 {
		return Latency{}
	}
	return Latency{
		Min:  nsToMS(t.latMin),
		Avg:  nsToMS(t.latSum) / float64(t.events),
		Max:  nsToMS(t.latMax),
		Sum:  nsToMS(t.latSum),
		P50:  pctMS(t.hist, 50),
		P95:  pctMS(t.hist, 95),
		P99:  pctMS(t.hist, 99),
		P999: pctMS(t.hist, 99.9),
		Pct:  pctMS(t.hist, pct),
	}
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
