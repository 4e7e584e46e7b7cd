// Package oltp is benchmatrix's built-in OLTP engine: the sysbench 1.0.20
// workloads statement for statement (reference/sysbench.md), a data loader,
// random distributions, closed- and open-loop workers, and per-interval
// statistics from per-worker HDR histograms.
package oltp

import "benchmatrix/engine"

// Interval is what happened in one report interval: the figures every
// engine reports (LatPct is at Options.Percentile, sysbench's column; Late,
// Dropped and Queue are --rate's) and, on a PhaseCheckpoint interval only,
// the statistics since the previous checkpoint as this engine's Result (the
// embedded interval's own Checkpoint stays nil).
type Interval struct {
	engine.Interval
	Checkpoint *Result `json:"checkpoint,omitempty"`
}

// Result is the measured window of a run (warm-up excluded) as every
// engine reports it, and the options the run had: sysbench's report reads
// its percentile, rate and warm-up from them. ClientDelay, when set, is a
// *DelayHist (clientdelay.go).
type Result struct {
	Options Options `json:"options"`
	engine.Result
}
