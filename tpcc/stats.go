package tpcc

import (
	"maps"
	"math"
	"slices"
	"time"

	"benchmatrix/engine"
	"benchmatrix/oltp"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds, 1 us to 100 s, 3 significant
// digits (the OLTP engine's histograms).
func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 100_000_000, 3) }

// tally is what one worker (or the merge of several) counted in a stretch
// of time.
type tally struct {
	events, reads, writes, others, errors, reconnects int64

	committed  [numTypes]int64 // events of the type that committed
	rolledBack int64           // New-Orders that rolled back (the 1%)
	restarts   [numTypes]int64 // attempts of the type restarted by an ignorable error
	codes      map[uint16]int64

	hist     *hdrhistogram.Histogram
	typeHist [numTypes]*hdrhistogram.Histogram
	latSum   int64 // ns
	typeSum  [numTypes]int64
	latMin   int64
	latMax   int64
}

func newTally() *tally {
	t := &tally{codes: map[uint16]int64{}, hist: newHist(), latMin: math.MaxInt64}
	for i := range t.typeHist {
		t.typeHist[i] = newHist()
	}
	return t
}

func (t *tally) record(typ Type, ns int64) {
	t.events++
	us := max(ns/1000, 1)
	_ = t.hist.RecordValue(min(us, 100_000_000))
	_ = t.typeHist[typ].RecordValue(min(us, 100_000_000))
	t.latSum += ns
	t.typeSum[typ] += ns
	t.latMin = min(t.latMin, ns)
	t.latMax = max(t.latMax, ns)
}

func (t *tally) add(o *tally) {
	t.events += o.events
	t.reads += o.reads
	t.writes += o.writes
	t.others += o.others
	t.errors += o.errors
	t.reconnects += o.reconnects
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
	t.hist.Merge(o.hist)
	t.latSum += o.latSum
	t.latMin = min(t.latMin, o.latMin)
	t.latMax = max(t.latMax, o.latMax)
}

func pct(h *hdrhistogram.Histogram, p float64) float64 {
	if h.TotalCount() == 0 || p <= 0 {
		return 0
	}
	return float64(h.ValueAtQuantile(p)) / 1000
}

func latency(h *hdrhistogram.Histogram, sumNS int64, minNS, maxNS int64, p float64) oltp.Latency {
	n := h.TotalCount()
	if n == 0 {
		return oltp.Latency{}
	}
	return oltp.Latency{
		Min: float64(minNS) / 1e6, Max: float64(maxNS) / 1e6,
		Avg: float64(sumNS) / 1e6 / float64(n), Sum: float64(sumNS) / 1e6,
		P50: pct(h, 50), P95: pct(h, 95), P99: pct(h, 99), P999: pct(h, 99.9), Pct: pct(h, p),
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
	Restarts int64        `json:"restarts"`
	PerMin   float64      `json:"per_min"`
	Share    float64      `json:"share"` // of all events
	Latency  oltp.Latency `json:"latency"`
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

func (t *tally) interval(ph oltp.Phase, start, end time.Duration, threads int, p float64) Interval {
	iv := Interval{Interval: engine.Interval{Phase: ph, Start: start, End: end, Threads: threads,
		Events: t.events, Reads: t.reads, Writes: t.writes, Others: t.others, Errors: t.errors, Reconnects: t.reconnects,
		LatP50: pct(t.hist, 50), LatP95: pct(t.hist, 95), LatP99: pct(t.hist, 99), LatPct: pct(t.hist, p)}}
	if t.events > 0 {
		iv.LatMax = float64(t.latMax) / 1e6
	}
	iv.NewOrders = t.committed[NewOrder]
	for i := range numTypes {
		iv.Committed += t.committed[i]
		iv.Types[i] = IntervalType{Committed: t.committed[i], P95: pct(t.typeHist[i], 95)}
	}
	return iv
}
