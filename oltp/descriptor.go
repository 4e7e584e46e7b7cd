package oltp

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/engine"
	"benchmatrix/sqlconn"
)

// Descriptor describes the engine to benchmatrix's manifest language, planner
// and runner (workloads/ lists it).
var Descriptor = &engine.Descriptor{
	Name:      "oltp",
	Workloads: Workloads(),
	IsKey: func(key string) bool {
		_, ok := CanonicalOption(key)
		return ok
	},
	Applies: func(key string, o engine.Options) (bool, []string) {
		return OptionApplies(key, o.Name())
	},
	CheckKey: func(key, value string) error {
		o := DefaultOptions()
		return o.Set(key, value)
	},
	Resolve:  resolve,
	Decode:   engine.DecodeJSON[Options],
	New:      func(env engine.Env) engine.Workload { return Workload{Log: env.Log, Procs: env.Procs} },
	OpenLoop: true,
}

// resolve is sysbench's defaults, the experiment's duration and warm-up,
// then the settings the engine reads, in order.
func resolve(workload string, settings []engine.Setting, duration, warmup time.Duration) (engine.Options, error) {
	o := DefaultOptions()
	o.Time, o.Warmup, o.ReportInterval = duration, warmup, time.Second
	if workload != "" {
		if err := o.Set("workload", workload); err != nil {
			return o, err
		}
	}
	for _, s := range settings {
		if _, ok := CanonicalOption(s.Key); !ok {
			continue
		}
		if err := o.Set(s.Key, s.Value); err != nil {
			return o, err
		}
	}
	return o, nil
}

var _ engine.Options = Options{}

// Name implements engine.Options: the workload's name.
func (o Options) Name() string { return o.Workload }

// Common implements engine.Options.
func (o Options) Common() engine.Common {
	return engine.Common{Threads: o.Threads, Time: o.Time, Warmup: o.Warmup, Events: o.Events, Rate: o.Rate,
		ReportInterval: o.ReportInterval, Seed: o.RandSeed, Grace: o.ForcedShutdown}
}

// WithCommon implements engine.Options.
func (o Options) WithCommon(c engine.Common) engine.Options {
	o.Threads, o.Time, o.Warmup, o.Events, o.Rate = c.Threads, c.Time, c.Warmup, c.Events, c.Rate
	o.ReportInterval, o.RandSeed, o.ForcedShutdown = c.ReportInterval, c.Seed, c.Grace
	return o
}

// Data implements engine.Options.
func (o Options) Data() engine.Data {
	d := engine.Data{Shape: DataShape(o), Tables: TableNames(o), RowsPerTable: int64(o.TableSize),
		Empty: EmptyTables(o), Changes: ChangesData(o),
		// The rows' values are drawn from the run's distribution (loader.rows).
		Dist: fmt.Sprintf("%s spec_iter=%d spec_pct=%g spec_res=%g pareto_h=%g zipfian_exp=%g",
			o.RandType, o.RandSpecIter, o.RandSpecPct, o.RandSpecRes, o.RandParetoH, o.RandZipfianExp)}
	if o.StorageEngine != "" {
		d.StorageEngines, d.StorageEngineKey = []string{o.StorageEngine}, "mysql_storage_engine"
	}
	switch {
	case !AssignsIDs(o):
	case o.ReinsertID == "auto" && ReadsOption(o, "reinsert_id"):
		d.AutoIDKey, d.AutoIDs = "reinsert_id", "reinsert_id = \"auto\" lets AUTO_INCREMENT choose the id of each re-inserted row"
	default:
		d.AutoIDKey, d.AutoIDs = "auto_inc", o.Workload+" with auto_inc = on lets AUTO_INCREMENT choose the ids of the rows it inserts"
	}
	return d
}

// Check implements engine.Options (CheckRun).
func (o Options) Check() error { return CheckRun(o) }

// Estimate implements engine.Options: the warm-up and the window, and a
// second to connect and stop.
func (o Options) Estimate() time.Duration { return o.Warmup + o.Time + time.Second }

// Describe implements engine.Options.
func (o Options) Describe() string {
	return fmt.Sprintf("%s, %d table(s) x %d rows, rand %s", o.Workload, o.Tables, o.TableSize, o.RandType)
}

// Workload is the engine behind engine.Workload.
type Workload struct {
	// Log receives the engine's progress lines (prepare); nil discards them.
	Log io.Writer
	// Procs, if set, makes room in the scheduler for workers on blocking
	// sockets (the command owns GOMAXPROCS; see sqlconn.ProcReserver).
	Procs sqlconn.ProcReserver
}

var _ engine.Workload = Workload{}

func (w Workload) log() io.Writer {
	if w.Log == nil {
		return io.Discard
	}
	return w.Log
}

func ownOptions(o engine.Options) (Options, error) { return engine.Own[Options]("oltp", o) }

// Prepare implements engine.Workload.
func (w Workload) Prepare(ctx context.Context, cfg *mysql.Config, o engine.Options) error {
	oo, err := ownOptions(o)
	if err != nil {
		return err
	}
	return Prepare(ctx, cfg, oo, w.log())
}

// Cleanup implements engine.Workload.
func (w Workload) Cleanup(ctx context.Context, cfg *mysql.Config, o engine.Options) error {
	oo, err := ownOptions(o)
	if err != nil {
		return err
	}
	return Cleanup(ctx, cfg, oo, w.log())
}

// Prewarm implements engine.Workload.
func (w Workload) Prewarm(ctx context.Context, cfg *mysql.Config, o engine.Options) error {
	oo, err := ownOptions(o)
	if err != nil {
		return err
	}
	return Prewarm(ctx, cfg, oo, w.log())
}

// Run implements engine.Workload.
func (w Workload) Run(ctx context.Context, cfg *mysql.Config, o engine.Options, report func(engine.Interval)) (*engine.Result, error) {
	oo, err := ownOptions(o)
	if err != nil {
		return nil, err
	}
	var hear func(Interval)
	if report != nil {
		hear = func(iv Interval) { report(iv.Engine()) }
	}
	res, err := RunWith(ctx, cfg, oo, hear, w.Procs)
	return res.Engine(), err
}

// Engine is the interval as every engine reports it.
func (iv Interval) Engine() engine.Interval {
	e := iv.Interval
	e.Checkpoint = iv.Checkpoint.Engine()
	return e
}

// Engine is the result as every engine reports it (nil for nil).
func (r *Result) Engine() *engine.Result {
	if r == nil {
		return nil
	}
	return &r.Result
}
