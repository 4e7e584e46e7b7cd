package engine

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Tally is what a set of events added up to, as an engine's workers count
// them and its collector merges them at each interval tick: counters, the
// exact latency sum, min and max in nanoseconds (from the workers' timers,
// so they do not depend on the histogram's resolution), and the latency
// histogram (NewHist). Each engine records its events itself.
type Tally struct {
	Events, Reads, Writes, Others, Errors, Reconnects int64
	LatSum, LatMin, LatMax                            int64 // ns; LatMin is valid when Events > 0
	Hist                                              *hdrhistogram.Histogram
}

// NewHist is a latency histogram in microseconds, from 1 µs to 100 s with
// 3 significant figures (≈147 KiB); an engine clamps longer events to 100 s.
func NewHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 100_000_000, 3) }

// Add merges o into t: its counters, its exact latencies and its
// histogram (when it has one).
func (t *Tally) Add(o *Tally) {
	if o.Events > 0 {
		if t.Events == 0 || o.LatMin < t.LatMin {
			t.LatMin = o.LatMin
		}
		t.LatMax = max(t.LatMax, o.LatMax)
	}
	t.Events += o.Events
	t.Reads += o.Reads
	t.Writes += o.Writes
	t.Others += o.Others
	t.Errors += o.Errors
	t.Reconnects += o.Reconnects
	t.LatSum += o.LatSum
	if o.Hist != nil && o.Hist.TotalCount() > 0 {
		t.Hist.Merge(o.Hist)
	}
}

// Latency summarises the tally, Pct at percentile pct (0..100).
func (t *Tally) Latency(pct float64) Latency {
	if t.Events == 0 {
		return Latency{}
	}
	return Latency{
		Min:  nsToMS(t.LatMin),
		Avg:  nsToMS(t.LatSum) / float64(t.Events),
		Max:  nsToMS(t.LatMax),
		Sum:  nsToMS(t.LatSum),
		P50:  PercentileMS(t.Hist, 50),
		P95:  PercentileMS(t.Hist, 95),
		P99:  PercentileMS(t.Hist, 99),
		P999: PercentileMS(t.Hist, 99.9),
		Pct:  PercentileMS(t.Hist, pct),
	}
}

// Interval is the tally as an interval's counters and latencies, LatPct at
// percentile pct; the engine sets the rest (phase, times, threads, the open
// loop's figures).
func (t *Tally) Interval(pct float64) Interval {
	iv := Interval{Events: t.Events, Reads: t.Reads, Writes: t.Writes, Others: t.Others,
		Errors: t.Errors, Reconnects: t.Reconnects}
	if t.Events > 0 {
		iv.LatP50 = PercentileMS(t.Hist, 50)
		iv.LatP95 = PercentileMS(t.Hist, 95)
		iv.LatP99 = PercentileMS(t.Hist, 99)
		iv.LatMax = nsToMS(t.LatMax)
		iv.LatPct = PercentileMS(t.Hist, pct)
	}
	return iv
}

// PercentileMS is the latency at percentile p (0..100) of a histogram in
// microseconds, in milliseconds; 0 when it is empty or p is 0. The value
// is the top of its bucket, at most 0.1% above the truth (sysbench's
// buckets are 1.8% wide and it reports their centres).
func PercentileMS(h *hdrhistogram.Histogram, p float64) float64 {
	if p <= 0 || h.TotalCount() == 0 {
		return 0
	}
	return float64(h.ValueAtQuantile(math.Min(p, 100))) / 1000
}

func nsToMS(ns int64) float64 { return float64(ns) / 1e6 }
