package tpcc

import (
	"maps"
	"slices"
	"time"

	"benchmatrix/engine"
	"benchmatrix/oltp"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// tally is what one worker (or the merge of several) counted in a stretch
// of time: every event (engine.Tally; latencies in the histograms in
// microseconds, 1 us to 100 s, 3 significant digits) and each type's.
type tally struct {
	engine.Tally

	committed  [numTypes]int64 // events of the type that committed
	rolledBack int64           // New-Orders that rolled back (the 1%)
	restarts   [numTypes]int64 // attempts of the type restarted by an ignorable error
	codes      map[uint16]int64

	typeHist [numTypes]*hdrhistogram.Histogram
	typeSum  [numTypes]int64 // ns
}

func newTally() *tally {
	t := &tally{Tally: engine.Tally{Hist: engine.NewHist()}, codes: map[uint16]int64{}}
	for i := range t.typeHist {
		t.typeHist[i] = engine.NewHist()
	}
	return t
}

func (t *tally) record(typ Type, ns int64) {
	if t.Events == 0 || ns < t.LatMin {
		t.LatMin = ns
	}
	t.LatMax = max(t.LatMax, ns)
	t.Events++
	us := max(ns/1000, 1)
	_ = t.Hist.RecordValue(min(us, 100_000_000))
	_ = t.typeHist[typ].RecordValue(min(us, 100_000_000))
	t.LatSum += ns
	t.typeSum[typ] += ns
}

func (t *tally) add(o *tally) {
	t.Tally.Add(&o.Tally)
	t.rolledBack += o.rolledBack
	for i := range numTypes {
		t.committed[i] += o.committed[i]
		t.restarts[i] += o.restarts[i]
		t.typeSum[i] += o.typeSum[i]
		t.typeHist[i].Merge(o.typeHist[i])
	}
	for k, v := range o.codes {
		t.codes[k] += v
	}
}

// TypeStats is one transaction type over the measured window.
type TypeStats struct {
	Type string `json:"type"`
	// Committed counts the events of this type that committed; for
	// New-Order, RolledBack those that rolled back by design (1%).
	Committed  int64 `json:"committed"`
	RolledBack int64 `json:"rolled_back,omitempty"`
	// Restarts counts attempts of this type restarted after an ignorable
	// error (deadlock, lock wait timeout): sysbench-tpcc runs the event
	// again from its start, drawing a new transaction type.
	Restarts int64          `json:"restarts"`
	PerMin   float64        `json:"per_min"`
	Share    float64        `json:"share"` // of all events
	Latency  engine.Latency `json:"latency"`
}

// Result is a TPC-C run's measured window: sysbench's report (Sysbench)
// and the TPC-C figures.
type Result struct {
	Sysbench *oltp.Result `json:"sysbench"`
	// NOPM is committed New-Orders per minute of the measured window,
	// TPM committed transactions of every type per minute (HammerDB's
	// names; not audited tpmC: no keying or think times by default, no
	// response-time constraints, no checkpoint or durability rules).
	NOPM  float64     `json:"nopm"`
	TPM   float64     `json:"tpm"`
	Types []TypeStats `json:"types"`
	// Errors counts every server error by its number: the ignorable ones
	// that restarted an event, and the New-Order rollbacks under 0 (they
	// are no server error; sysbench-tpcc counts them as errors).
	Errors map[uint16]int64 `json:"errors"`
	// Check is the consistency check after the run, when asked.
	Check *CheckResult `json:"check,omitempty"`
}

// ErrorCodes lists Errors' numbers in order.
func (r *Result) ErrorCodes() []uint16 { return slices.Sorted(maps.Keys(r.Errors)) }

// Interval is one report interval: sysbench's figures and the TPC-C
// ones.
type Interval struct {
	engine.Interval
	NewOrders int64 `json:"new_orders"` // committed New-Orders in the interval
	Committed int64 `json:"committed"`  // committed transactions of every type
	// Types holds each type's committed count and latency percentile in
	// the interval.
	Types [numTypes]IntervalType `json:"types"`
	// Partial marks the stretch between the last tick and the end of the
	// run (shorter than an interval).
	Partial bool `json:"partial,omitempty"`
}

// IntervalType is one type in one interval.
type IntervalType struct {
	Committed int64   `json:"committed"`
	P95       float64 `json:"lat_p95_ms"`
}

// NOPM is the interval's committed New-Orders per minute.
func (iv Interval) NOPM() float64 { return perMin(iv.NewOrders, iv.End-iv.Start) }

// TPM is the interval's committed transactions per minute.
func (iv Interval) TPM() float64 { return perMin(iv.Committed, iv.End-iv.Start) }

func perMin(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Minutes()
}

func (t *tally) interval(ph engine.Phase, start, end time.Duration, threads int, p float64) Interval {
	iv := Interval{Interval: t.Interval(p)}
	iv.Phase, iv.Start, iv.End, iv.Threads = ph, start, end, threads
	iv.NewOrders = t.committed[NewOrder]
	for i := range numTypes {
		iv.Committed += t.committed[i]
		iv.Types[i] = IntervalType{Committed: t.committed[i], P95: engine.PercentileMS(t.typeHist[i], 95)}
	}
	return iv
}
