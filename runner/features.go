package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/analysis"
	"benchmatrix/cache/datacache"
	"benchmatrix/capacity/cellslo"
	"benchmatrix/catalog"
	"benchmatrix/coldstart"
	"benchmatrix/experiment"
	"benchmatrix/lifecycle"
	"benchmatrix/limits"
	"benchmatrix/observe"
	"benchmatrix/observe/inject"
	"benchmatrix/observe/watch"
	"benchmatrix/profile"
	"benchmatrix/profile/cellprofile"
	"benchmatrix/record"
	"benchmatrix/results"
	"benchmatrix/server"
	"benchmatrix/topology"
	"benchmatrix/topology/nodes"
)

// The features, and what the run asks of them outside a cell's hooks:
// the one file of the runner that knows them by name.

// features lists the features that take part in each cell, in the order
// their hooks run; it is made once per run (the data cache and the limits
// in force last the run). The order matters where one feature reads
// another's record: injection collects its onsets before observation
// matches them to the stalls it found, and the events stop before the
// samplers.
func (r *Runner) features() []lifecycle.NewHook {
	dc := datacache.New(r.m.Server)
	lim := limits.New()
	return []lifecycle.NewHook{
		nodes.NewCluster, // heals the nodes before a cell, sets its settings on them, compares them after loading
		func() lifecycle.Hook { return dc },
		coldstart.New,
		inject.New,
		nodes.NewEvents,             // [[events]] on a topology's nodes
		watch.New(analysis.Observe), // sampler, stalls, growth, waits, nodes, user metrics
		cellprofile.New(profile.WriteModeProfile),
		func() lifecycle.Hook { return lim },
		cellslo.New,    // the capacity search; the measured run judged against the cell's SLO
		nodes.NewCheck, // the nodes agree after the cell
	}
}

// Opener starts servers with the manifest's provider (server.Open), or
// the cell's cluster (topology).
func Opener(spec experiment.ServerSpec) StartFunc {
	return func(ctx context.Context, s StartSpec) (server.Server, error) {
		if s.Topology.IsCluster() {
			cfg := topology.Config{Topology: *s.Topology, Binary: spec.Binary, TempDir: spec.TempDir, Startup: s.Startup,
				Provider: spec.Provider, Image: s.Image, DSNs: spec.DSNs, Log: s.Log}
			if spec.Provider == catalog.External {
				// Existing servers, one DSN per node: checked, never started.
				a, err := topology.Attach(ctx, cfg)
				if err != nil {
					return nil, err // not a nil *Attached in an interface
				}
				return a, nil
			}
			return topology.Open(ctx, cfg)
		}
		return server.Open(ctx, server.Spec{Provider: spec.Provider, Binary: spec.Binary, TempDir: spec.TempDir,
			Image: s.Image, DSN: spec.DSN, Startup: s.Startup, Limits: s.Limits,
			InitCache: datacache.InitCache(spec)})
	}
}

// cluster is the running cluster, or nil on a single server.
func (r *Runner) cluster() *topology.Cluster {
	return topology.Of(r.srv)
}

// unplanned names the nodes of the running cluster that died by
// themselves; none on a single server.
func (r *Runner) unplanned() []string {
	if cl := r.cluster(); cl != nil {
		return cl.Unplanned()
	}
	return nil
}

// waitQuiet waits, up to lim, for the host to be quiet before the cell
// (observe.WaitQuiet).
func (r *Runner) waitQuiet(ctx context.Context, lim time.Duration) (time.Duration, bool) {
	pid := 0
	if p, ok := r.srv.(server.ProcessOwner); ok {
		pid = p.PID()
	}
	return observe.WaitQuiet(ctx, lim, pid)
}

// recordColumns puts observation's columns in the run record: the
// sampled columns of intervals.csv (when any cell observes) and, among
// them, the user's metrics, for the plots.
func recordColumns(p *experiment.Plan, run *record.Run) {
	run.MetricColumns = watch.Columns(p)
	run.UserMetrics = watch.UserMetricColumns(p)
}

// resolveFeatures resolves the plan (experiment.Resolve) knowing every
// column a manifest may name (the intervals', the sampler's, the nodes'),
// and notes in it the loads the data cache already holds.
func resolveFeatures(m *experiment.Manifest, f experiment.Flags) (*experiment.Plan, error) {
	f.Columns = append(append(append([]string(nil), results.IntervalColumns...), observe.Columns()...), slices.Sorted(maps.Keys(observe.NodeColumnDocs()))...)
	p, err := experiment.Resolve(m, f)
	if err != nil {
		return nil, err
	}
	datacache.MarkCached(p)
	return p, nil
}

// setupFeatures runs before the first cell: profiling's perf files and
// checks.
func setupFeatures(plan *experiment.Plan, tempDir string, notices io.Writer) error {
	return cellprofile.Setup(plan, tempDir, notices)
}

// checkLimitSupport refuses, before any server starts, limits this machine
// cannot apply (not root, a controller missing): exit 2 naming it.
func (r *Runner) checkLimitSupport() error {
	err := limits.CheckSupport(r.plan)
	var ue *server.LimitsUnsupportedError
	if errors.As(err, &ue) {
		return &UsageError{Msg: ue.Error()}
	}
	return err
}

// checkInject runs [inject]'s statements once, so that SQL the server
// refuses is exit 2 before the first cell instead of a failure in every
// one. A table that does not exist yet is not refused: the workload's
// tables exist only once a cell has loaded them, and every cell checks
// the statements again then (observe/inject).
func (r *Runner) checkInject(ctx context.Context) error {
	inj := inject.Injector(r.m)
	if inj == nil {
		return nil
	}
	db := r.openDB(r.schema)
	defer db.Close()
	err := inj.Check(ctx, db)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == errNoSuchTable {
		fmt.Fprintf(r.log, "[inject] is checked once the data is loaded: %v\n", err)
		return nil
	}
	if err != nil {
		return &UsageError{Msg: fmt.Sprintf("%s: [inject] %v", r.m.Path, err)}
	}
	return nil
}

// errNoSuchTable is the server's ER_NO_SUCH_TABLE.
const errNoSuchTable = 1146
