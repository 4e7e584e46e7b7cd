// Package oltp is benchmatrix's built-in OLTP engine: the sysbench 1.0.20
// workloads statement for statement (reference/sysbench.md), a data loader,
// random distributions, closed- and open-loop workers, and per-interval
// statistics from per-worker HDR histograms.
package oltp

import (
	"time"

	"benchmatrix/engine"
)

// Interval is what happened in one report interval: the figures every
// engine reports (LatPct is at Options.Percentile, sysbench's column; Late,
// Dropped and Queue are --rate's) and, on a PhaseCheckpoint interval only,
// the statistics since the previous checkpoint as this engine's Result (the
// embedded interval's own Checkpoint stays nil).
type Interval struct {
	engine.Interval
	Checkpoint *Result `json:"checkpoint,omitempty"`
}

// Result is the measured window of a run (warm-up excluded).
type Result struct {
	Options Options       `json:"options"`
	Elapsed time.Duration `json:"elapsed"`
	// TotalTime, when set, is sysbench's "total time" of a run with
	// checkpoints: the time since the clocks started, while Elapsed (the
	// rates' basis) is the time since the last checkpoint.
	TotalTime  time.Duration `json:"total_time,omitempty"`
	Events     int64         `json:"events"`
	Reads      int64         `json:"reads"`
	Writes     int64         `json:"writes"`
	Others     int64         `json:"others"`
	Errors     int64         `json:"errors"`
	Reconnects int64         `json:"reconnects"`
	Late       int64         `json:"late,omitempty"`
	Dropped    int64         `json:"dropped,omitempty"`
	// Backlog is the open loop's arrivals of the measured window still
	// queued, unstarted, when it ended; BacklogAges how long each had
	// waited by then (its latency is at least that).
	Backlog     int64           `json:"backlog,omitempty"`
	BacklogAges []time.Duration `json:"-"`
	// ClientDelay is the open loop's client-side delays of the measured
	// window: from an arrival's intended start to an idle worker taking it
	// (clientdelay.go).
	ClientDelay DelayHist       `json:"-"`
	Latency     engine.Latency  `json:"latency"`
	Fairness    engine.Fairness `json:"fairness"`
	// ForcedShutdown tells that Options.ForcedShutdown ran out before every
	// worker had finished: the run was cut. Unfinished is the number of
	// events that were in flight and were cut (sysbench's "Number of
	// unfinished transactions on forced shutdown"); they are not in Events,
	// Errors or Latency, while the statements they had completed are in
	// Reads, Writes and Others. Elapsed then runs to the cut.
	ForcedShutdown bool  `json:"forced_shutdown,omitempty"`
	Unfinished     int64 `json:"unfinished,omitempty"`
	// Histogram holds (bucket upper bound ms, count) pairs of the measured
	// window, for --histogram and for stored results.
	Histogram [][2]float64 `json:"-"`
}

// Queries is reads + writes + others.
func (r *Result) Queries() int64 { return r.Reads + r.Writes + r.Others }

// TPS is events per second of the measured window.
func (r *Result) TPS() float64 { return perSecond(r.Events, r.Elapsed) }

// QPS is statements per second of the measured window.
func (r *Result) QPS() float64 { return perSecond(r.Queries(), r.Elapsed) }

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
