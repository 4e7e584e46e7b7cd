package oltp

import (
	"math"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"benchmatrix/engine"
)

// Phase indexes of per-phase tallies.
const (
	phWarmup = 0
	phRun    = 1
)

// workerStats is what one worker has recorded since the last collection,
// split by the phase each event started in. The worker takes mu once per
// event (never per statement); it is uncontended except at the tick, when
// the collector swaps the histogram for a clean one, so the hot path never
// waits on another worker.
type workerStats struct {
	mu sync.Mutex
	ph [2]tally
	_  [64]byte // keep workers' locks on separate cache lines
}

func newWorkerStats(warmup bool) *workerStats {
	ws := &workerStats{}
	ws.ph[phRun] = newTally()
	if warmup {
		ws.ph[phWarmup] = newTally()
	}
	return ws
}

// eventRecord is one event's outcome, accumulated by the worker without
// locking and handed over in one go.
type eventRecord struct {
	phase      int
	done       bool  // the event completed (false: abandoned at stop)
	ns         int64 // latency, from the intended start under --rate
	q          counts
	errors     int64
	reconnects int64
	late       bool
	// dispatchNs is the client's own delay in taking an open-loop arrival
	// while the worker waited for it (clientdelay.go); -1 when the worker
	// was busy (the wait was the queue's).
	dispatchNs int64
}

func (ws *workerStats) record(e *eventRecord) {
	ws.mu.Lock()
	t := &ws.ph[e.phase]
	if t.Hist == nil { // an event of a phase this run does not have
		t = &ws.ph[phRun]
	}
	if e.done {
		t.recordEvent(e.ns)
	}
	t.Reads += e.q.Reads
	t.Writes += e.q.Writes
	t.Others += e.q.Others
	t.Errors += e.errors
	t.Reconnects += e.reconnects
	if e.late {
		t.late++
	}
	if e.dispatchNs >= 0 && e.done {
		t.dispatch.record(e.dispatchNs)
	}
	ws.mu.Unlock()
}

// collector merges the workers' tallies at each tick into the current
// interval and the per-phase cumulative tallies. Only the coordinator
// goroutine uses it.
type collector struct {
	ws    []*workerStats
	spare *hdrhistogram.Histogram // clean histogram swapped into a worker
	cum   [2]tally
	// per-worker events and latency sum (ns) of the run phase, for
	// sysbench's threads fairness.
	perEvents []int64
	perLatSum []int64
}

func newCollector(ws []*workerStats) *collector {
	c := &collector{ws: ws, perEvents: make([]int64, len(ws)), perLatSum: make([]int64, len(ws))}
	c.spare = engine.NewHist()
	c.cum[phWarmup] = newTally()
	c.cum[phRun] = newTally()
	return c
}

// collect drains every worker into iv (which it clears first) and into
// the cumulative tallies.
func (c *collector) collect(iv *tally) { c.collectPhases(iv, phRun) }

// collectPhases is collect for the tallies of phases up to upTo only. The
// interval that closes the warm-up takes the warm-up's events and leaves
// those of the measured window, which started after the switch, to the
// next interval: otherwise they count in both the warm-up interval and the
// result, as many of them as complete before the coordinator collects (a
// few hundred on a loaded machine).
func (c *collector) collectPhases(iv *tally, upTo int) {
	iv.clearCounts()
	iv.Hist.Reset()
	c.drain(iv, upTo)
}

// drain moves every worker's tallies of phases up to upTo into iv (added
// to what it holds) and into the cumulative tallies.
func (c *collector) drain(iv *tally, upTo int) {
	for i, ws := range c.ws {
		for p := range ws.ph {
			if p > upTo {
				continue
			}
			ws.mu.Lock()
			cur := ws.ph[p]
			if cur.Hist == nil {
				ws.mu.Unlock()
				continue
			}
			if cur.Events == 0 {
				// Nothing recorded in the histogram: keep it, take counters.
				ws.ph[p].clearCounts()
				ws.mu.Unlock()
				cur.Hist = nil
			} else {
				ws.ph[p] = tally{Tally: engine.Tally{Hist: c.spare}}
				ws.mu.Unlock()
			}
			iv.add(&cur)
			c.cum[p].add(&cur)
			if p == phRun {
				c.perEvents[i] += cur.Events
				c.perLatSum[i] += cur.LatSum
			}
			if cur.Hist != nil {
				cur.Hist.Reset()
				c.spare = cur.Hist
			}
		}
	}
}

// checkpoint returns the run phase's statistics since the last
// checkpoint (a Result without its times) and starts them afresh, as
// sysbench's --report-checkpoints resets all counters.
func (c *collector) checkpoint(o Options) *Result {
	res := c.result(o)
	t := &c.cum[phRun]
	t.clearCounts()
	t.Hist.Reset()
	clear(c.perEvents)
	clear(c.perLatSum)
	return res
}

// result is the run phase's statistics so far: a Result without its
// times and without what only the end of a run tells (dropped events, the
// client's delays, the backlog, a forced shutdown).
func (c *collector) result(o Options) *Result {
	t := &c.cum[phRun]
	return &Result{Options: o, Result: engine.Result{Events: t.Events, Reads: t.Reads, Writes: t.Writes, Others: t.Others,
		Errors: t.Errors, Reconnects: t.Reconnects, Late: t.late,
		Latency: t.Latency(o.Percentile), Fairness: c.fairness(), Histogram: histogramBars(t.Hist)}}
}

// fairness is sysbench's threads fairness over the run phase: mean and
// population standard deviation of events per worker and of the
// per-worker sum of event latencies in seconds.
func (c *collector) fairness() engine.Fairness {
	ev := make([]float64, len(c.perEvents))
	lt := make([]float64, len(c.perLatSum))
	for i := range ev {
		ev[i] = float64(c.perEvents[i])
		lt[i] = float64(c.perLatSum[i]) / 1e9
	}
	var f engine.Fairness
	f.EventsAvg, f.EventsStddev = MeanStddev(ev)
	f.TimeAvg, f.TimeStddev = MeanStddev(lt)
	return f
}

// MeanStddev is the mean and population standard deviation, as sysbench
// reports its "Threads fairness" (events and execution time per thread).
func MeanStddev(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	var sq float64
	for _, x := range xs {
		sq += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sq / float64(len(xs)))
}
