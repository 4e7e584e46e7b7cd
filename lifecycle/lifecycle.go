// Package lifecycle is a cell's lifecycle as the features see it: the
// phases every cell goes through, the hooks a feature implements to take
// part in them, and Cell, the narrow view of the cell under way that a hook
// receives. The runner carries the phases out (runner/lifecycle.go) and
// lists the features (runner/features.go); a feature lives in its own
// package and imports this one, never the runner.
package lifecycle

import (
	"context"
	"database/sql"
	"io"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/server"
)

// Phase names a step of a cell's lifecycle; a cell that fails says in
// which one.
type Phase string

// The phases, in the order a cell goes through them.
const (
	PhaseStart     Phase = "start/verify"      // a server up for the cell, every node healed
	PhaseLoad      Phase = "load"              // restart for startup options, globals, the data
	PhaseAfterLoad Phase = "after-load checks" // what needs the data: nodes agree, [inject] works
	PhaseLimits    Phase = "limits"            // the cell's resource limits
	PhasePrewarm   Phase = "prewarm"           // the tables read into the buffer pool
	PhaseDrain     Phase = "drain"             // dirty pages flushed, the host quiet
	PhaseSearch    Phase = "capacity search"   // the highest rate meeting the cell's SLO (SearchHook)
	PhaseWarmup    Phase = "warm-up"           // the engine runs, not measured
	PhaseMeasure   Phase = "measure"           // the measured window and its grace
	PhaseCollect   Phase = "collect"           // observers stopped, after-cell snapshots and checks
	PhaseBetween   Phase = "between cells"     // a failed cell's server brought back
)

// SnapshotMinRows is the data size from which the load phase saves a
// loaded data shape as a datadir snapshot, so that a later cell with the
// same shape restores it instead of loading again.
const SnapshotMinRows = 100000

// VerifyTimeout bounds the wait for a cluster's nodes to apply what the
// primary committed before their data is compared: the collect phase's
// deadline on a cluster allows for it.
const VerifyTimeout = 2 * time.Minute

// Cell is what a hook may use of the cell under way. Its contexts are the
// hook's own (each method that waits takes one); the server is the one
// the cell runs on, which a restart keeps.
type Cell interface {
	// Planned is the cell as the plan made it.
	Planned() *experiment.Cell
	// Record is the cell's record, which the hooks fill in.
	Record() *record.Cell
	// Plan is the run's plan (its manifest, every cell's columns).
	Plan() *experiment.Plan
	// Server is the server the cell runs on.
	Server() server.Server
	// OpenDB opens a connection pool to the server on schema ("" for
	// none), as the runner connects.
	OpenDB(schema string) *sql.DB
	// Schema is the workload's schema.
	Schema() string
	// OutDir is the results directory ("" when there is none).
	OutDir() string
	// Log hears progress lines; Progress names what the cell is doing.
	Log() io.Writer
	Progress(what string)
	// Change is the change the plan decided before the cell
	// (experiment.Between), with what the runner added since.
	Change() experiment.Change
	// RunOK reports whether the engine's run returned its result.
	RunOK() bool
	// Stopped reports whether the server stopped answering.
	Stopped() bool
	// Settle bounds what a hook asks the server after the run: nothing
	// more once it stopped answering.
	Settle(ctx context.Context) (context.Context, context.CancelFunc)
	// Restart restarts the server on its startup options: a lifecycle
	// event, after which the cell's settings are in force again.
	Restart(ctx context.Context) error
	// DataLost says the server lost the cell's data (a cluster started
	// again): the next load phase loads it.
	DataLost()
	// Reload loads the cell's data again as o (the capacity search's
	// steps changed it), in the phase under way.
	Reload(ctx context.Context, o engine.Spec) error
}

// Hook is one feature's part in one cell's lifecycle. A feature implements
// the phase interfaces below that it needs; the lifecycle calls them in
// the order of the runner's list of features, and knows no feature by
// name.
type Hook interface {
	// Feature names the feature, for messages.
	Feature() string
}

// NewHook makes a feature's hook for one cell. A feature that keeps state
// across cells (the data cache, the limits in force) returns the same
// hook each time.
type NewHook func() Hook

// StartHook runs in the start/verify phase, once the server is up.
type StartHook interface {
	Start(ctx context.Context, c Cell) error
}

// DataHook takes part in the load phase: Restore offers the cell's data
// shape (key) from elsewhere than a load, reporting whether it did (the
// server is restarted on the restored data); after a load, Snapshotted
// hears that the provider saved the loaded data as a snapshot.
type DataHook interface {
	Restore(ctx context.Context, c Cell, key string, o engine.Spec) (bool, error)
	Snapshotted(ctx context.Context, c Cell, key string, o engine.Spec)
}

// LoadedHook ends the load phase, once the cell's data is in place and its
// settings are set (a cold start).
type LoadedHook interface {
	Loaded(ctx context.Context, c Cell) error
}

// SettingsHook hears that the cell's dynamic settings (set) were set on
// the server, and sets them elsewhere too (a cluster's other nodes).
type SettingsHook interface {
	Settings(ctx context.Context, c Cell, set []server.Setting) error
}

// AfterLoadHook runs once the cell's data is in place: checks that need
// the data.
type AfterLoadHook interface {
	AfterLoad(ctx context.Context, c Cell) error
}

// LimitsHook puts the cell's conditions in place; undo, if not nil, runs
// when the cell ends.
type LimitsHook interface {
	Limits(ctx context.Context, c Cell) (undo func(), err error)
}

// SearchHook is the capacity search phase of a cell that searches
// (experiment.Cell.Searches): it returns the options of the cell's
// measured run. Steps bounds the search: at most n engine runs of o,
// each at most step long with its warm-up; the phase's deadline adds
// what every engine run costs besides.
type SearchHook interface {
	Steps(c *experiment.Cell) (n int, step time.Duration)
	Search(ctx context.Context, c Cell, cfg *mysql.Config, w engine.Workload, o engine.Spec) (engine.Spec, error)
}

// EndpointHook may change how the engine's connections dial cfg (a
// Galera cell's writers spread over the nodes).
type EndpointHook interface {
	Endpoint(c Cell, cfg *mysql.Config)
}

// ObserveHook starts what runs beside the engine, from the warm-up on,
// until Collect. ctx lasts the cell (it ends when the server stops
// answering); an error fails the cell before the engine runs (Collect
// still runs).
type ObserveHook interface {
	Observe(ctx context.Context, c Cell) error
}

// RunHook hears that the engine's run starts, with its options (after an
// automatic warm-up: no warm-up left).
type RunHook interface {
	BeforeRun(ctx context.Context, c Cell, o engine.Common)
}

// IntervalHook hears every interval the engine reports, on the engine's
// goroutine: it must not block.
type IntervalHook interface {
	Interval(iv engine.Interval)
}

// CollectHook ends what Observe started and records it on the cell; it
// runs whether or not the engine's run went well (Cell.RunOK), with the
// cell's intervals in place. An error fails a cell that was ok.
type CollectHook interface {
	Collect(ctx context.Context, c Cell) error
}
