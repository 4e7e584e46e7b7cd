// Package engine is the seam between benchmatrix and its load generators:
// the Workload interface the runner drives, the Options every engine's
// resolved options implement, the Descriptor that tells the manifest
// language, the planner and the runner what an engine needs, and the Result
// and Interval every engine reports in. An engine is its own package (oltp,
// slap, ...) with a Descriptor; the list of engines is one table,
// workloads/, above the engines. This package imports no engine.
package engine

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/sqlconn"
)

// Workload is an engine as the runner drives it. The options passed are the
// engine's own (Descriptor.Resolve made them); an engine refuses another
// engine's with an error.
type Workload interface {
	// Prepare creates the engine's tables in cfg.DBName and loads them.
	Prepare(ctx context.Context, cfg *mysql.Config, o Options) error
	// Cleanup drops what Prepare created, and nothing else.
	Cleanup(ctx context.Context, cfg *mysql.Config, o Options) error
	// Prewarm reads the engine's data into the buffer pool.
	Prewarm(ctx context.Context, cfg *mysql.Config, o Options) error
	// Run drives the workload for the warm-up (intervals reported with
	// PhaseWarmup, excluded from the result) and then the measured window.
	// report, if not nil, is called from one goroutine at the end of every
	// interval. Cancelling ctx stops new events, lets in-flight ones finish
	// within the grace, and returns what was measured with ctx.Err().
	Run(ctx context.Context, cfg *mysql.Config, o Options, report func(Interval)) (*Result, error)
}

// Common are the run controls every engine has: the runner reads them (the
// cell's deadline, the warm-up, the preflight's connection count) and sets
// some (the seed it chose, the grace, an automatic warm-up's run).
type Common struct {
	Threads int           // concurrent clients
	Time    time.Duration // the measured window; 0: until Events, or the run's own end
	Warmup  time.Duration // before the window, reported but not measured
	// Events ends the window after this many events (0: no limit).
	Events int64
	// Rate is an open-loop target in events per second (0: closed loop);
	// only for an engine whose Descriptor says OpenLoop.
	Rate           float64
	ReportInterval time.Duration // 0: no intervals
	// Seed is the random seed (0: the engine picks one from the clock).
	Seed int64
	// Grace is how long in-flight events may run past the window's end
	// before their connections are closed (0: no limit).
	Grace time.Duration
}

// Data is what an engine's options need loaded before a run.
type Data struct {
	// Shape names everything that determines the loaded data: two runs with
	// the same shape can share it (the data cache's key and the planner's
	// reload decision). "" means the engine loads nothing.
	Shape string
	// Tables are the tables Prepare creates in the schema (table growth,
	// claiming them on an external server).
	Tables []string
	// RowsPerTable is how many rows Prepare loads into each table; Empty
	// says it creates them without rows. TotalRows, when set, is the rows
	// it loads in all, for tables of different sizes.
	RowsPerTable int64
	TotalRows    int64
	Empty        bool
	// RowBytes is the on-disk size of a loaded row with its indexes, for
	// the preflight's disk check (0: the runner's default, an sbtest row's).
	RowBytes int64
	// Changes says a run changes the data, so that the next cell reloads.
	Changes bool
	// Dist names what the loaded values are drawn from besides the seed
	// (Common.Seed): the data cache keys an entry by it.
	Dist string
	// AutoIDKey, when set, is the option that lets AUTO_INCREMENT choose
	// the ids of the rows a run inserts, and AutoIDs says so in a sentence.
	// On Galera, whose AUTO_INCREMENT steps by the cluster size, such a
	// run inserts other rows than on one server (experiment/equal.go).
	AutoIDKey, AutoIDs string
	// StorageEngines are the tables' storage engines as the options name
	// them (none: the server's default), and StorageEngineKey the option.
	StorageEngines   []string
	StorageEngineKey string
}

// Rows is the number of rows Prepare loads (the load phase's deadline, the
// snapshot and data cache threshold, the disk check, plan's estimate).
func (d Data) Rows() int64 {
	switch {
	case d.Empty:
		return 0
	case d.TotalRows > 0:
		return d.TotalRows
	}
	return int64(len(d.Tables)) * d.RowsPerTable
}

// Options is one engine's resolved options for a cell. Each engine's type
// is a plain value (copying it copies the options) whose JSON is run.json's
// "workload" object; that object's "workload" field names the workload, by
// which Registry.Bind finds the engine again.
type Options interface {
	// Name is the workload's name, as the manifest's workload key says.
	Name() string
	Common() Common
	// WithCommon returns a copy of the options with c in force.
	WithCommon(c Common) Options
	Data() Data
	// Check refuses options the engine cannot run, naming the key.
	Check() error
	// Estimate is how long a run takes, for plan's time estimate.
	Estimate() time.Duration
	// Describe is a short description for summary.md ("oltp_read_write,
	// 1 table(s) x 10000 rows, rand special").
	Describe() string
}

// Env is what the runner gives an engine.
type Env struct {
	Log io.Writer // progress lines (prepare); never nil
	// Procs, if set, makes room in the scheduler for workers on blocking
	// sockets (the command owns GOMAXPROCS).
	Procs sqlconn.ProcReserver
}

// Setting is one manifest key and its value.
type Setting struct{ Key, Value string }

// Descriptor is one engine, described once: the manifest keys it reads, how
// a cell's options are made from them and read back from run.json, and how
// it runs. The manifest language, the planner, the runner and the results
// ask the descriptor (and the options it makes) instead of knowing engines.
type Descriptor struct {
	// Name is the engine's name ("oltp", "slap").
	Name string
	// Workloads are the values of the manifest's workload key that select
	// the engine (oltp's oltp_read_write, ...; slap's "slap").
	Workloads []string
	// IsKey reports whether the engine reads a [workload] key (besides
	// "workload"); Shared keys are the ones it shares with other engines
	// (threads), which do not select it.
	IsKey func(key string) bool
	// Applies reports whether o's workload reads a key the engine has, and
	// if not which workloads do (a manifest naming an option its workload
	// ignores is refused).
	Applies func(key string, o Options) (bool, []string)
	// CheckKey checks one key's value alone (validation before expansion).
	CheckKey func(key, value string) error
	// Resolve makes a cell's options: the engine's defaults, then the
	// settings in order (the [workload] table's, then the cell's), and the
	// experiment's duration and warm-up.
	Resolve func(workload string, settings []Setting, duration, warmup time.Duration) (Options, error)
	// Decode reads options back from their JSON (run.json).
	Decode func(b []byte) (Options, error)
	// New returns the engine's Workload.
	New func(env Env) Workload
	// Metrics names the engine's own figures in Result.Metrics and
	// Interval.Metrics, in the order tables show them.
	Metrics []string
	// OpenLoop says the engine paces events at Common.Rate.
	OpenLoop bool
	// RunsToEnd says a run does a fixed amount of work and ends by itself
	// (Common.Time only bounds it): the measure phase has no deadline of
	// its own, the watchdog still ends a run whose server stops answering.
	RunsToEnd bool
	// IntervalColumns are the Interval.Metrics that intervals.csv writes,
	// in order, after the columns every engine has: intervals.csv has
	// every engine's (results.IntervalColumns), empty in the rows of
	// another engine's cells.
	IntervalColumns []string
	// Headline is the figure the engine's runs are compared on (the
	// Conclusion's ratios, the rounds' decisions): a cells.csv column. The
	// zero value is tps (HeadlineFigure).
	Headline Headline
}

// Headline is an engine's headline figure: the cells.csv column a
// comparison of its cells decides on, the name sentences give it, its
// unit, and which way is better. The runner records it with every result
// (Result.Headline), so a stored run concludes on what it was run for.
type Headline struct {
	Name           string `json:"name"`  // the cells.csv column ("tps", "nopm")
	Label          string `json:"label"` // in sentences ("tps", "NOPM")
	Unit           string `json:"unit"`  // "transactions per second"
	HigherIsBetter bool   `json:"higher_is_better"`
}

// TPS is the headline of the engines that declare none: transactions per
// second, as sysbench reports them.
var TPS = Headline{Name: "tps", Label: "tps", Unit: "transactions per second", HigherIsBetter: true}

// HeadlineFigure is the engine's headline: the declared one, else TPS.
func (d *Descriptor) HeadlineFigure() Headline {
	if d == nil || d.Headline.Name == "" {
		return TPS
	}
	return d.Headline
}

// Own is o as an engine's own options type T, or an error naming the
// engine when the runner handed it another engine's.
func Own[T Options](engine string, o Options) (T, error) {
	own, ok := o.(T)
	if !ok {
		return own, fmt.Errorf("the %s engine cannot run %T options (workload %s)", engine, o, o.Name())
	}
	return own, nil
}
