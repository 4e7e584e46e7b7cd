package slap

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/engine"
	"benchmatrix/oltp"
)

// Name is the slap workload's name in a manifest (workload = "slap").
const Name = "slap"

// Percentile is the latency percentile a slap cell reports as its Pct.
const Percentile = 95

// Descriptor describes mysqlslap's workload to benchmatrix's manifest language,
// planner and runner (workloads/ lists it). Its keys are
// mariadb-slap's long option names with underscores (Keys); a cell runs
// one storage engine at one concurrency, its iterations to the end, with
// no warm-up (every iteration drops and creates its schema), and the
// experiment's duration bounds it.
var Descriptor = &engine.Descriptor{
	Name:      Name,
	Workloads: []string{Name},
	IsKey:     IsKey,
	Applies: func(key string, _ engine.Options) (bool, []string) {
		if IsKey(key) {
			return true, nil
		}
		_, only := oltp.OptionApplies(key, "")
		if len(only) == 0 {
			only = oltp.Workloads()
		}
		return false, only
	},
	CheckKey: func(key, value string) error {
		c := ManifestConfig()
		return c.SetKey(key, value)
	},
	Resolve:   resolve,
	Decode:    engine.DecodeJSON[Options],
	New:       func(engine.Env) engine.Workload { return Workload{} },
	RunsToEnd: true,
}

// Options are a slap cell's: the configuration, and the run controls the
// runner reads. Their JSON is run.json's "workload" object.
type Options struct {
	Workload       string        `json:"workload"` // Name
	Threads        int           `json:"threads"`  // the concurrency
	Time           time.Duration `json:"time"`     // the cell's bound
	ReportInterval time.Duration `json:"report_interval"`
	StorageEngine  string        `json:"mysql_storage_engine"`
	ForcedShutdown time.Duration `json:"forced_shutdown,omitempty"`
	RandSeed       int64         `json:"rand_seed"`
	Config         Config        `json:"slap"`
}

// resolve builds a slap cell's configuration from the settings (the
// [workload] table's, then the cell's): threads are the concurrency, the
// duration the cell's bound, no warm-up, no tables to load.
func resolve(_ string, settings []engine.Setting, duration, _ time.Duration) (engine.Options, error) {
	c := ManifestConfig()
	autoSet := false
	for _, s := range settings {
		if s.Key == "workload" || !IsKey(s.Key) {
			continue
		}
		if err := c.SetKey(s.Key, s.Value); err != nil {
			return nil, err
		}
		autoSet = autoSet || s.Key == "auto_generate_sql"
	}
	if err := c.Finish(autoSet); err != nil {
		return nil, err
	}
	o := Options{Workload: Name, Time: duration, ReportInterval: time.Second, Threads: c.Concurrency[0],
		StorageEngine: "default", Config: c}
	if len(c.Engines) > 0 {
		o.StorageEngine = c.Engines[0].Name
	}
	return o, nil
}

var _ engine.Options = Options{}

// Name implements engine.Options.
func (o Options) Name() string { return Name }

// Common implements engine.Options.
func (o Options) Common() engine.Common {
	return engine.Common{Threads: o.Threads, Time: o.Time, ReportInterval: o.ReportInterval, Seed: o.RandSeed, Grace: o.ForcedShutdown}
}

// WithCommon implements engine.Options: slap has no warm-up, event limit
// or rate.
func (o Options) WithCommon(c engine.Common) engine.Options {
	o.Threads, o.Time, o.ReportInterval, o.RandSeed, o.ForcedShutdown = c.Threads, c.Time, c.ReportInterval, c.Seed, c.Grace
	return o
}

// Data implements engine.Options: each iteration creates its own schema and
// tables and drops them, so there is nothing to load. The shape names the
// storage engine, so that the planner groups a slap matrix's cells by it,
// as it groups an engine's cells by their data.
func (o Options) Data() engine.Data {
	d := engine.Data{Shape: Name + " engine=" + strings.ToLower(o.StorageEngine), Empty: true}
	for _, e := range o.Config.Engines {
		d.StorageEngines, d.StorageEngineKey = append(d.StorageEngines, e.Name), "engine"
	}
	if o.Config.AutoGenerate && o.Config.AddAutoIncrement {
		d.AutoIDKey, d.AutoIDs = "auto_generate_sql_add_autoincrement", "auto_generate_sql_add_autoincrement lets AUTO_INCREMENT choose the ids of the rows it inserts"
	}
	return d
}

// Check implements engine.Options.
func (o Options) Check() error { return o.Config.Check() }

// Estimate implements engine.Options: at about 2,000 queries a second, and
// a schema made and dropped per iteration.
func (o Options) Estimate() time.Duration {
	q := max(o.Config.NumberOfQueries, 1)
	it := time.Duration(max(o.Config.Iterations, 1))
	return time.Duration(float64(q)/2000*float64(time.Second))*it + it*300*time.Millisecond + time.Second
}

// Describe implements engine.Options.
func (o Options) Describe() string {
	return fmt.Sprintf("slap, %s load, %d iteration(s), engine %s", o.Config.loadKind(), o.Config.Iterations, o.StorageEngine)
}

func ownOptions(o engine.Options) (Options, error) { return engine.Own[Options](Name, o) }

var _ engine.Workload = Workload{}

// Prepare implements engine.Workload: nothing to load.
func (Workload) Prepare(context.Context, *mysql.Config, engine.Options) error { return nil }

// Cleanup implements engine.Workload: every run drops its own schema.
func (Workload) Cleanup(context.Context, *mysql.Config, engine.Options) error { return nil }

// Prewarm implements engine.Workload: mysqlslap's tables are new each iteration.
func (Workload) Prewarm(context.Context, *mysql.Config, engine.Options) error { return nil }

// Run implements engine.Workload.
func (Workload) Run(ctx context.Context, cfg *mysql.Config, o engine.Options, report func(engine.Interval)) (*engine.Result, error) {
	so, err := ownOptions(o)
	if err != nil {
		return nil, err
	}
	return run(ctx, cfg, so, report)
}
