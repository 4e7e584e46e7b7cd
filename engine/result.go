package engine

import "time"

// Phase tells whether an interval belongs to the warm-up (recorded, but
// excluded from the result) or the measured window.
type Phase string

// The phases of a run.
const (
	PhaseWarmup Phase = "warmup"
	PhaseRun    Phase = "run"
	// PhaseCheckpoint marks a report of the full statistics since the
	// previous checkpoint (its Checkpoint holds them).
	PhaseCheckpoint Phase = "checkpoint"
)

// Interval is what happened in one report interval of a run: what the
// runner, the stall detector, intervals.csv and the plots read, whatever
// the engine.
type Interval struct {
	Phase   Phase         `json:"phase"`
	Start   time.Duration `json:"start"` // since the clocks started (beginning of warm-up)
	End     time.Duration `json:"end"`
	Threads int           `json:"threads"`

	Events     int64 `json:"events"`
	Reads      int64 `json:"reads"`
	Writes     int64 `json:"writes"`
	Others     int64 `json:"others"`
	Errors     int64 `json:"errors"`
	Reconnects int64 `json:"reconnects"`

	// Latency of the events completed in this interval, in milliseconds.
	LatP50 float64 `json:"lat_p50_ms"`
	LatP95 float64 `json:"lat_p95_ms"`
	LatP99 float64 `json:"lat_p99_ms"`
	LatMax float64 `json:"lat_max_ms"`
	// LatPct is the latency at the engine's report percentile.
	LatPct float64 `json:"lat_pct_ms"`

	// Open loop only: events whose start was late, events dropped because
	// the backlog was full, and the backlog at the end.
	Late    int64 `json:"late,omitempty"`
	Dropped int64 `json:"dropped,omitempty"`
	Queue   int64 `json:"queue,omitempty"`

	// Metrics are the engine's own per-interval figures (Descriptor.Metrics
	// names them), e.g. a TPC-C engine's new orders.
	Metrics map[string]float64 `json:"metrics,omitempty"`

	// Checkpoint is set on PhaseCheckpoint intervals only.
	Checkpoint *Result `json:"checkpoint,omitempty"`
}

// Seconds is the interval's length in seconds.
func (iv Interval) Seconds() float64 { return (iv.End - iv.Start).Seconds() }

// PerSecond is n counted in the interval, per second of it (0 for an
// interval of no length).
func (iv Interval) PerSecond(n int64) float64 {
	sec := iv.Seconds()
	if sec <= 0 {
		return 0
	}
	return float64(n) / sec
}

// Latency summarises a latency distribution, in milliseconds.
type Latency struct {
	Min  float64 `json:"min_ms"`
	Avg  float64 `json:"avg_ms"`
	Max  float64 `json:"max_ms"`
	Sum  float64 `json:"sum_ms"`
	P50  float64 `json:"p50_ms"`
	P95  float64 `json:"p95_ms"`
	P99  float64 `json:"p99_ms"`
	P999 float64 `json:"p999_ms"`
	// Pct is the value at the engine's report percentile.
	Pct float64 `json:"pct_ms"`
}

// Fairness is how evenly the workers shared the events (sysbench's
// "Threads fairness" block).
type Fairness struct {
	EventsAvg    float64 `json:"events_avg"`
	EventsStddev float64 `json:"events_stddev"`
	TimeAvg      float64 `json:"time_avg_s"`
	TimeStddev   float64 `json:"time_stddev_s"`
}

// Result is the measured window of a run (warm-up excluded), the same for
// every engine: events (an engine's unit of work: a transaction, a query),
// statements by kind, errors, the latency distribution, and the engine's
// own named figures in Metrics. Its JSON is run.json's "result".
type Result struct {
	Elapsed time.Duration `json:"elapsed"`
	// TotalTime, when set, is the time since the clocks started of a run
	// with checkpoints, while Elapsed (the rates' basis) is the time since
	// the last checkpoint.
	TotalTime  time.Duration `json:"total_time,omitempty"`
	Events     int64         `json:"events"`
	Reads      int64         `json:"reads"`
	Writes     int64         `json:"writes"`
	Others     int64         `json:"others"`
	Errors     int64         `json:"errors"`
	Reconnects int64         `json:"reconnects"`
	Late       int64         `json:"late,omitempty"`
	Dropped    int64         `json:"dropped,omitempty"`
	// Backlog is an open loop's arrivals of the window still queued,
	// unstarted, when it ended; BacklogAges how long each had waited by then
	// (its latency is at least that).
	Backlog     int64           `json:"backlog,omitempty"`
	BacklogAges []time.Duration `json:"-"`
	// ClientDelay, for an open loop, counts the arrivals the client itself
	// held (from the intended start to an idle worker taking it) at least
	// a given time; nil when the engine does not tell.
	ClientDelay DelayCounter `json:"-"`
	Latency     Latency      `json:"latency"`
	Fairness    Fairness     `json:"fairness"`
	// ForcedShutdown tells that the grace after the time limit ran out
	// before every worker had finished; Unfinished events were cut (they
	// are not in Events, Errors or Latency).
	ForcedShutdown bool  `json:"forced_shutdown,omitempty"`
	Unfinished     int64 `json:"unfinished,omitempty"`
	// ErrorsByCode counts the errors by the server's error number (or the
	// client's name for one without a number), when the engine tells them
	// apart.
	ErrorsByCode map[string]int64 `json:"errors_by_code,omitempty"`
	// Metrics are the engine's own figures of the window, named in its
	// Descriptor.Metrics (e.g. TPC-C's "nopm").
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Headline is the figure the cell is compared on, as its engine's
	// Descriptor declared it when it ran (the runner records it); nil in a
	// run.json written before headlines: tps.
	Headline *Headline `json:"headline,omitempty"`
	// Histogram holds (bucket upper bound ms, count) pairs of the measured
	// window.
	Histogram [][2]float64 `json:"-"`
}

// DelayCounter counts the delays of at least d.
type DelayCounter interface {
	AtLeast(d time.Duration) int64
}

// Queries is reads + writes + others.
func (r *Result) Queries() int64 { return r.Reads + r.Writes + r.Others }

// TPS is events per second of the measured window.
func (r *Result) TPS() float64 { return PerSecond(r.Events, r.Elapsed) }

// QPS is statements per second of the measured window.
func (r *Result) QPS() float64 { return PerSecond(r.Queries(), r.Elapsed) }

// PerSecond is n per second of d, 0 for none.
func PerSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
