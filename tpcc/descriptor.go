package tpcc

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"benchmatrix/engine"
	"benchmatrix/sqlconn"

	"github.com/go-sql-driver/mysql"
)

// Name is the workload's name in manifests: [workload] name = "tpcc".
const Name = "tpcc"

// sharedKeys are the run keys tpcc reads that other engines read too.
var sharedKeys = []string{"threads", "rand_seed", "percentile"}

// Descriptor describes the TPC-C engine to the manifest language, the
// planner and the runner (workloads/ lists it).
var Descriptor = &engine.Descriptor{
	Name:      Name,
	Workloads: []string{Name},
	IsKey:     isKey,
	Applies: func(key string, _ engine.Options) (bool, []string) {
		return isKey(key), nil
	},
	CheckKey: func(key, value string) error {
		o := DefaultOptions()
		return o.setKey(key, value)
	},
	Resolve:         resolve,
	Decode:          engine.DecodeJSON[Options],
	New:             func(env engine.Env) engine.Workload { return Workload{Log: env.Log, Procs: env.Procs} },
	Metrics:         metricNames(),
	IntervalColumns: intervalMetricNames(),
	// TPC-C's answers are about new orders: HammerDB's NOPM, not tps
	// (which counts every type, rolled-back New-Orders included).
	Headline: engine.Headline{Name: "nopm", Label: "NOPM", Unit: "new orders per minute", HigherIsBetter: true},
}

func isKey(key string) bool {
	k := strings.ReplaceAll(strings.ToLower(key), "-", "_")
	return slices.Contains(Keys, k) || slices.Contains(sharedKeys, k)
}

// setKey sets a manifest key: a TPC-C option or a shared run key.
func (o *Options) setKey(key, value string) error {
	switch strings.ReplaceAll(strings.ToLower(key), "-", "_") {
	case "threads":
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil || n < 1 {
			return fmt.Errorf("threads: %q is not a whole number >= 1", value)
		}
		o.Threads = n
	case "rand_seed":
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return fmt.Errorf("rand_seed: %q is not a whole number", value)
		}
		o.RandSeed = n
	case "percentile":
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || f < 0 || f > 100 {
			return fmt.Errorf("percentile: %q is not in 0..100", value)
		}
		o.Percentile = f
	default:
		return o.Set(key, value)
	}
	return nil
}

// resolve is sysbench-tpcc's defaults with a matrix's scale (one
// warehouse: the default 100 loads 60 million rows), the experiment's
// duration and warm-up, then the settings tpcc reads, in order.
func resolve(_ string, settings []engine.Setting, duration, warmup time.Duration) (engine.Options, error) {
	o := DefaultOptions()
	o.Scale = 1
	o.Time, o.Warmup, o.Interval = duration, warmup, time.Second
	for _, s := range settings {
		if s.Key == "workload" || !isKey(s.Key) {
			continue
		}
		if err := o.setKey(s.Key, s.Value); err != nil {
			return o, err
		}
	}
	return o, nil
}

var _ engine.Options = Options{}

// Name implements engine.Options.
func (o Options) Name() string { return Name }

// Common implements engine.Options.
func (o Options) Common() engine.Common {
	return engine.Common{Threads: o.Threads, Time: o.Time, Warmup: o.Warmup, Events: o.Events,
		ReportInterval: o.Interval, Seed: o.RandSeed, Grace: o.Grace}
}

// WithCommon implements engine.Options.
func (o Options) WithCommon(c engine.Common) engine.Options {
	o.Threads, o.Time, o.Warmup, o.Events = c.Threads, c.Time, c.Warmup, c.Events
	o.Interval, o.RandSeed, o.Grace = c.ReportInterval, c.Seed, c.Grace
	return o
}

// Data implements engine.Options: every table of every table set; a run
// adds orders, order lines and history, so the next cell loads again.
func (o Options) Data() engine.Data {
	var rows int64
	for _, n := range o.Rows() {
		rows += n
	}
	rows += int64(o.Scale) * int64(o.Tables) * DistPerWare * CustPerDist * 10 // order lines, 10 per order on average
	tables := TableNames(o)
	return engine.Data{
		Shape: fmt.Sprintf("tpcc tables=%d scale=%d use_fk=%v force_pk=%v engine=%s table_options=%q",
			o.Tables, o.Scale, o.UseFK, o.ForcePK, strings.ToLower(o.Engine), o.TableOptions),
		Tables:       tables,
		RowsPerTable: rows / int64(len(tables)),
		TotalRows:    rows,
		// 326 MiB of datadir for one warehouse's 599,310 rows (the data
		// cache's entry, MariaDB 10.11): about 570 bytes a row.
		RowBytes: 570,
		Changes:  true,
		Dist:     "tpcc load 1",
	}
}

// Check implements engine.Options.
func (o Options) Check() error { return o.Validate() }

// Estimate implements engine.Options.
func (o Options) Estimate() time.Duration { return o.Warmup + o.Time + time.Second }

// Describe implements engine.Options.
func (o Options) Describe() string {
	mix := "10/10/1/1/1"
	if len(o.Mix) > 0 {
		parts := make([]string, len(o.Mix))
		for i, w := range o.Mix {
			parts[i] = strconv.Itoa(w)
		}
		mix = strings.Join(parts, "/")
	}
	return fmt.Sprintf("tpcc, %d table set(s) x %d warehouse(s), trx_level %s, mix %s", o.Tables, o.Scale, o.TrxLevel, mix)
}

// Workload is the TPC-C engine behind engine.Workload.
type Workload struct {
	Log io.Writer // prepare's progress lines; nil discards them
	// Procs, if set, makes room in the scheduler for workers on blocking
	// sockets, as for the oltp engine (the command owns GOMAXPROCS).
	Procs sqlconn.ProcReserver
}

var _ engine.Workload = Workload{}

func own(o engine.Options) (Options, error) { return engine.Own[Options](Name, o) }

// Prepare implements engine.Workload.
func (w Workload) Prepare(ctx context.Context, cfg *mysql.Config, o engine.Options) error {
	oo, err := own(o)
	if err != nil {
		return err
	}
	_, err = Prepare(ctx, cfg, oo, w.Log)
	return err
}

// Cleanup implements engine.Workload.
func (w Workload) Cleanup(ctx context.Context, cfg *mysql.Config, o engine.Options) error {
	oo, err := own(o)
	if err != nil {
		return err
	}
	return Cleanup(ctx, cfg, oo, w.Log)
}

// Prewarm implements engine.Workload.
func (w Workload) Prewarm(ctx context.Context, cfg *mysql.Config, o engine.Options) error {
	oo, err := own(o)
	if err != nil {
		return err
	}
	return Prewarm(ctx, cfg, oo, w.Log)
}

// Run implements engine.Workload. With check on, the consistency
// conditions run after the window; a violated one fails the cell (the
// result is returned with the error).
func (w Workload) Run(ctx context.Context, cfg *mysql.Config, o engine.Options, report func(engine.Interval)) (*engine.Result, error) {
	oo, err := own(o)
	if err != nil {
		return nil, err
	}
	var hear func(Interval)
	if report != nil {
		hear = func(iv Interval) { report(iv.Engine()) }
	}
	res, err := RunWith(ctx, cfg, oo, hear, w.Procs)
	if err != nil || res == nil {
		return res.Engine(), err
	}
	if oo.CheckAfter {
		c, cerr := Check(ctx, cfg, oo)
		if cerr != nil {
			return res.Engine(), fmt.Errorf("consistency check: %w", cerr)
		}
		res.Check = c
		if !c.Passed {
			return res.Engine(), fmt.Errorf("consistency check failed: %s", strings.Join(c.Failed(), "; "))
		}
	}
	return res.Engine(), nil
}

// metricNames are the figures tpcc adds to a result and its intervals:
// NOPM, TPM, then each type's committed transactions per minute and its
// latency percentiles.
func metricNames() []string {
	names := []string{"nopm", "tpm"}
	for _, t := range Types()[:5] {
		names = append(names, t.String()+"_committed", t.String()+"_per_min", t.String()+"_p95_ms", t.String()+"_p99_ms", t.String()+"_avg_ms")
	}
	return append(names, "rolled_back", "restarts", "consistency_failures")
}

// intervalMetricNames are the figures each interval adds (intervals.csv's
// tpcc columns): NOPM, TPM, then each type's committed transactions per
// minute and p95 in the interval.
func intervalMetricNames() []string {
	names := []string{"nopm", "tpm"}
	for _, t := range Types()[:5] {
		names = append(names, t.String()+"_per_min", t.String()+"_p95_ms")
	}
	return names
}

// Engine is the interval as every engine reports it, with NOPM, TPM and
// each type's committed count per minute and p95 in Metrics.
func (iv Interval) Engine() engine.Interval {
	e := iv.Interval
	e.Metrics = map[string]float64{"nopm": iv.NOPM(), "tpm": iv.TPM()}
	for _, t := range Types()[:5] {
		e.Metrics[t.String()+"_per_min"] = perMin(iv.Types[t].Committed, iv.End-iv.Start)
		e.Metrics[t.String()+"_p95_ms"] = iv.Types[t].P95
	}
	return e
}

// Engine is the result as every engine reports it (nil for nil).
func (r *Result) Engine() *engine.Result {
	if r == nil {
		return nil
	}
	s := r.Sysbench
	e := &engine.Result{Elapsed: s.Elapsed, Events: s.Events, Reads: s.Reads, Writes: s.Writes, Others: s.Others,
		Errors: s.Errors, Reconnects: s.Reconnects, Latency: s.Latency, Fairness: s.Fairness,
		Histogram: s.Histogram, Metrics: map[string]float64{"nopm": r.NOPM, "tpm": r.TPM}, ErrorsByCode: map[string]int64{}}
	var restarts int64
	for _, t := range r.Types {
		if t.Type == Purge.String() {
			continue
		}
		e.Metrics[t.Type+"_committed"] = float64(t.Committed)
		e.Metrics[t.Type+"_per_min"] = t.PerMin
		e.Metrics[t.Type+"_p95_ms"] = t.Latency.P95
		e.Metrics[t.Type+"_p99_ms"] = t.Latency.P99
		e.Metrics[t.Type+"_avg_ms"] = t.Latency.Avg
		restarts += t.Restarts
		if t.RolledBack > 0 {
			e.Metrics["rolled_back"] = float64(t.RolledBack)
		}
	}
	e.Metrics["restarts"] = float64(restarts)
	for code, n := range r.Errors {
		if code == 0 {
			e.ErrorsByCode["new_order_rollback"] = n
			continue
		}
		e.ErrorsByCode[strconv.Itoa(int(code))] = n
	}
	if r.Check != nil {
		var bad int64
		for _, c := range r.Check.Conditions {
			bad += c.Violations
		}
		e.Metrics["consistency_failures"] = float64(bad)
	}
	return e
}
