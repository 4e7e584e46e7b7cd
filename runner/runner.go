// Package runner executes a plan: for each cell it reconfigures the server
// (SET GLOBAL, or a restart when a variable needs one), loads data when the
// data shape changed, warms up, measures, and hands the cell to the results
// writer before the next cell starts.
package runner

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/lifecycle"
	"benchmatrix/record"
	"benchmatrix/results"
	"benchmatrix/server"
	"benchmatrix/sqlconn"
	"benchmatrix/version"
)

// StartSpec is what a new server must be.
type StartSpec struct {
	Startup []server.Setting
	Image   string           // Docker image, for provider docker
	Limits  catalog.LimitSet // the first cell's resource limits
	// Topology, when a cluster, starts one.
	Topology *experiment.Topology
	// Log hears what starting involves (a cluster's nodes joining, an
	// existing topology's checks); nil for none.
	Log io.Writer
}

// StartFunc starts (or connects to) a server.
type StartFunc func(ctx context.Context, spec StartSpec) (server.Server, error)

// Sink receives the results as the run makes them: the run record after
// every change, each finished cell before the next starts, and the summary
// at the end. results.Writer is the real one (a results directory).
type Sink interface {
	WriteRun(run *record.Run) error
	AppendCell(c *record.Cell) error
	WriteSummary(run *record.Run) error
	// Close releases the sink (a results directory's lock).
	Close() error
}

var _ Sink = (*results.Writer)(nil)

// Config says where results go and how to reach servers.
type Config struct {
	OutDir string
	// Sink, if set, takes the results instead of a results directory in
	// OutDir (tests).
	Sink Sink
	Log  io.Writer // progress lines; nil means none
	// Start starts servers; nil means the manifest's provider (Opener).
	Start StartFunc
	// Workload, if set, runs every cell instead of the cell's engine
	// (tests give a fake).
	Workload engine.Workload
	// Procs, if set, lets an engine make room in the scheduler for workers
	// on blocking sockets (the command owns GOMAXPROCS).
	Procs sqlconn.ProcReserver
	// Resume, when set, is the stored run.json of an interrupted run in
	// OutDir: its finished cell runs are kept and not run again.
	Resume *record.Run
	// Progress, if set, hears which cell runs and in what phase.
	Progress Progress
	// Force lets prepare use a schema that holds tables the workload does
	// not define (an external server's).
	Force bool
	// Connector makes the runner's own connections (settings, checks,
	// drain); nil means the MySQL driver's. Tests give a fake server's.
	Connector func(cfg *mysql.Config) (driver.Connector, error)
	// Grace bounds a cell past its measured window: statements still in
	// flight that long after the window's end (a lock, a frozen server)
	// are cut by closing their connections. 0 means DefaultGrace.
	Grace time.Duration
	// Unresponsive is how long the server may leave a ping unanswered
	// before the cell ends as "the server stopped answering" (lifecycle.go);
	// 0 means DefaultUnresponsive.
	Unresponsive time.Duration
	// Seeds are the random seeds of a stored run's cell runs (by
	// results.RunKey), for run --rerun; cells without one get a new seed.
	Seeds map[string]int64
	// Shard is the shard of the plan this run runs (shard.go), for run.json.
	Shard *record.ShardRecord
}

// Runner executes one plan.
type Runner struct {
	cfg  Config
	plan *experiment.Plan
	m    *experiment.Manifest
	log  io.Writer
	// length is duration = "auto"'s choice, once the first round ran.
	length *record.LengthRecord

	srv     server.Server
	flavor  catalog.Flavor
	version string // the server's, for MySQL's per-version restart rules
	fresh   bool   // the server was started for the next cell
	// serverTime is the time spent starting and restarting servers.
	serverTime time.Duration
	image      string // the running server's image (docker)
	schema     string
	loaded     string       // data key of what is loaded, "" for nothing
	loadedOpts *engine.Spec // the workload it was loaded with, for cleanup
	readOnly   map[string]bool
	globals    setGlobals // the values before a cell SET them (globals.go)
	topo       string     // the running topology's Key
	chg        changes    // the change decided per cell (change.go)
	// hooks make the features' hooks of each cell (features.go).
	hooks []lifecycle.NewHook
}

// DefaultGrace is how long a cell may run past its measured window before
// the statements still in flight are cut: a cell always ends within its
// window plus this, whatever the server does.
const DefaultGrace = 10 * time.Second

// settleTimeout bounds what the runner asks the server after a cell (wait
// events, table sizes), so that a server that does not answer cannot hold
// the matrix.
const settleTimeout = 15 * time.Second

// ErrCellsFailed is returned (wrapped) when the run finished but some cells
// failed; every finished cell is in the results.
var ErrCellsFailed = errors.New("some cells failed")

// UsageError is a problem with the experiment found against the server
// before the first cell (an unknown variable, say). The CLI exits 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ExitCode implements exitcode.Coder.
func (e *UsageError) ExitCode() int { return exitcode.Usage }

// Run executes the plan and writes the results directory. On interrupt
// (ctx cancelled) it keeps every finished cell, marks the run interrupted
// and returns ctx.Err().
func Run(ctx context.Context, plan *experiment.Plan, cfg Config) (*record.Run, error) {
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	if cfg.Progress == nil {
		cfg.Progress = noProgress{}
	}
	if cfg.Start == nil {
		cfg.Start = Opener(plan.Manifest.Server)
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	defer cfg.Progress.Close()
	r := &Runner{cfg: cfg, plan: plan, m: plan.Manifest, log: log, readOnly: map[string]bool{}, schema: plan.Manifest.Server.Schema}
	r.hooks = r.features()
	return r.run(ctx)
}

func (r *Runner) run(ctx context.Context) (_ *record.Run, err error) {
	run := r.newRecord()
	recordColumns(r.plan, run) // features.go
	run.Shard = r.cfg.Shard    // shard.go
	done, err := r.resumed(run)
	if err != nil {
		return nil, err
	}
	var todo []int
	for i, c := range r.plan.Cells {
		if !done[results.RunKey(c.Name, c.Repeat)] {
			todo = append(todo, i)
		}
	}
	if len(todo) > 0 {
		// The results directory is made only once the server is up and
		// the preflight checks passed: a run refused before its first cell
		// leaves nothing that would block the corrected run.
		if err := r.checkLimitSupport(); err != nil {
			return run, err
		}
		if err := r.startServer(ctx, r.plan.Cells[todo[0]]); err != nil {
			return run, err
		}
		defer func() { r.stopServer() }()
		if err := r.preflight(ctx, run); err != nil {
			return run, err
		}
	}
	w, err := r.openSink(run)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if err := w.WriteRun(run); err != nil {
		return nil, err
	}
	firstStart := r.serverTime // before the first cell
	defer func() {
		run.Finished = time.Now()
		split := results.Accounting(run, firstStart.Seconds())
		run.Time = &split
		run.Fingerprint = results.ComputeFingerprint(run)
		switch {
		case ctx.Err() != nil:
			run.Status = record.StatusInterrupted
		case err != nil && !errors.Is(err, ErrCellsFailed):
			run.Status = record.StatusFailed
			run.Notes = append(run.Notes, "run stopped: "+err.Error())
		default:
			run.Status = record.StatusFinished
		}
		if werr := w.WriteRun(run); werr != nil && err == nil {
			err = werr
		}
		if werr := w.WriteSummary(run); werr != nil && err == nil {
			err = werr
		}
	}()
	if len(todo) == 0 {
		fmt.Fprintf(r.log, "every cell run has finished already\n")
		return run, nil
	}
	return run, r.runRounds(ctx, run, w, todo) // rounds.go: until = "conclusive" adds rounds
}

// newRecord is the run record before any cell: the manifest, the plan, the
// tool and the host.
func (r *Runner) newRecord() *record.Run {
	m := r.m
	// The stored text has no secrets (a password in [server] dsn).
	text := m.Stored()
	sum := sha256.Sum256([]byte(text))
	return &record.Run{
		Tool:         record.Tool{Name: "benchmatrix", Version: version.Version, GoVersion: runtime.Version()},
		Experiment:   m.Name,
		Description:  m.Description,
		ManifestPath: m.Path,
		Manifest:     text,
		ManifestHash: hex.EncodeToString(sum[:]),
		Baseline:     m.Baseline,
		Columns:      r.plan.Columns,
		Axes:         axisNames(m),
		Pivot:        m.Pivot,
		ServerConfig: m.Server.Config,
		Plan:         experiment.PlanRecord(r.plan.Cells),
		Order:        string(r.plan.Order),
		Seed:         r.plan.Seed,
		Status:       record.StatusRunning,
		Started:      time.Now(),
		Host:         hostFacts(""),
	}
}

// resumed takes a resumed run's finished cell runs into run, after
// checking that the stored run is of the same manifest and plan, and
// returns them as done.
func (r *Runner) resumed(run *record.Run) (map[string]bool, error) {
	done := map[string]bool{}
	old := r.cfg.Resume
	if old == nil {
		return done, nil
	}
	if old.ManifestHash != run.ManifestHash {
		return nil, &UsageError{Msg: fmt.Sprintf("cannot resume %s: the manifest changed since that run (sha256 %s, now %s)",
			r.cfg.OutDir, short(old.ManifestHash), short(run.ManifestHash))}
	}
	added, err := r.growForResume(old) // rounds.go: until = "conclusive"
	if err != nil {
		return nil, err
	}
	run.Plan = experiment.PlanRecord(r.plan.Cells)
	if !samePlan(old.Plan, r.plan.Cells[:len(r.plan.Cells)-added]) {
		return nil, &UsageError{Msg: fmt.Sprintf("cannot resume %s: the plan differs from the stored one (different --duration, --warmup or --repeats?)", r.cfg.OutDir)}
	}
	run.Started = old.Started
	run.Cells = old.Cells
	// What the first run learnt of its server stays, whether or not a
	// server is started again (a finished run resumed starts none).
	run.Server, run.Host, run.Variables, run.Rounds = old.Server, old.Host, old.Variables, old.Rounds
	run.Notes = append(old.Notes, fmt.Sprintf("resumed at %s with %d of %d cell runs finished",
		time.Now().UTC().Format(time.RFC3339), len(old.Cells), len(r.plan.Cells)))
	for _, c := range old.Cells {
		done[results.RunKey(c.Name, c.Repeat)] = true
	}
	return done, nil
}

// openSink is where the results go: the configured sink, a new results
// directory, or the stored one of a resumed run.
func (r *Runner) openSink(run *record.Run) (Sink, error) {
	if r.cfg.Sink != nil {
		return r.cfg.Sink, nil
	}
	if r.cfg.Resume != nil {
		return results.Reopen(r.cfg.OutDir, r.cfg.Resume)
	}
	return results.Create(r.cfg.OutDir, r.plan.Columns, run.MetricColumns)
}

// preflight records the server and refuses, before the first cell, what
// the server cannot do: restart-only values it cannot take, a schema with
// foreign tables, unknown variables, too few connections, too little disk.
func (r *Runner) preflight(ctx context.Context, run *record.Run) error {
	if b, ok := r.srv.(server.Borrowed); ok {
		for _, note := range b.Recovered() {
			fmt.Fprintf(r.log, "%s\n", note)
			run.Notes = append(run.Notes, note)
		}
	}
	info := r.srv.Info()
	run.Server = info
	run.Host = hostFacts(info.Datadir)
	if t := catalog.TargetOf(info.Flavor, info.Version); r.plan.Target() != t {
		// The restart decisions as the run takes them, for this server.
		r.plan = r.plan.ForTarget(t)
		run.Plan = experiment.PlanRecord(r.plan.Cells)
	}
	if err := r.verifyStartup(ctx); err != nil {
		return err
	}
	if err := r.checkSchema(ctx); err != nil {
		return err
	}
	if err := r.checkInject(ctx); err != nil { // features.go
		return err
	}
	return r.checkVariables(ctx, run)
}

// runCells runs the cell runs not done yet, handing each to the sink
// before the next starts. A failed cell is counted, not fatal.
func (r *Runner) runCells(ctx context.Context, run *record.Run, w Sink, todo []int) error {
	failed := 0
	for _, c := range run.Cells {
		if c.Status != record.CellOK {
			failed++
		}
	}
	for _, i := range todo {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		cell := &r.plan.Cells[i]
		fmt.Fprintf(r.log, "[%d/%d] %s (repeat %d)\n", i+1, len(r.plan.Cells), cell.Name, cell.Repeat)
		r.cfg.Progress.Cell(i, len(r.plan.Cells), *cell)
		res := r.runCell(ctx, cell)
		r.cfg.Progress.CellDone()
		if ctx.Err() != nil {
			// An interrupted cell is not a finished one: keep it out of the
			// results so a later run can redo it whole.
			return ctx.Err()
		}
		if res.Status != record.CellOK {
			failed++
			fmt.Fprintf(r.log, "    FAILED: %s\n", res.Error)
		} else {
			fmt.Fprintf(r.log, "    %.1f tps, %.1f qps, p95 %.3f ms, p99 %.3f ms\n",
				res.Result.TPS(), res.Result.QPS(), res.Result.Latency.P95, res.Result.Latency.P99)
		}
		if err := w.AppendCell(res); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
		run.Cells = append(run.Cells, *res)
		if err := w.WriteRun(run); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d cell runs failed: %w", failed, len(r.plan.Cells), ErrCellsFailed)
	}
	return nil
}

// startServer starts (or connects to) the server the cell needs.
func (r *Runner) startServer(ctx context.Context, c experiment.Cell) error {
	fmt.Fprintf(r.log, "starting %s server%s\n", r.m.Server.Provider, map[bool]string{true: " " + c.Image, false: ""}[c.Image != ""])
	began := time.Now()
	srv, err := r.cfg.Start(ctx, StartSpec{Startup: r.startupFor(c), Image: c.Image, Limits: c.Limits, Topology: c.Topology, Log: r.log})
	r.serverTime += time.Since(began)
	if err != nil {
		if ctx.Err() != nil {
			// Interrupted while starting: whatever the start said, it is
			// the interrupt (exit 130), not a failure.
			return fmt.Errorf("start server: %w", ctx.Err())
		}
		return fmt.Errorf("start server: %w", err)
	}
	r.srv, r.image, r.loaded, r.loadedOpts, r.fresh = srv, c.Image, "", nil, true
	r.topo = c.Topology.Key()
	info := srv.Info()
	r.flavor, r.version = info.Flavor, info.Version
	fmt.Fprintf(r.log, "server: %s %s at %s\n", info.Flavor, info.Version, info.Address)
	return r.createSchema(ctx)
}

func (r *Runner) stopServer() {
	if r.srv == nil {
		return
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.srv.Stop(stopCtx); err != nil {
		fmt.Fprintf(r.log, "stop server: %v\n", err)
	}
	r.srv = nil
}

// verifyStartup refuses, before the first cell, a plan that needs restart-
// only values a server cannot be restarted into, naming each variable.
func (r *Runner) verifyStartup(ctx context.Context) error {
	v, ok := r.srv.(server.Borrowed)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var errs []error
	for _, c := range r.plan.Cells {
		var restartOnly []server.Setting
		for _, s := range r.startupFor(c) {
			if r.needsRestart(s.Name) {
				restartOnly = append(restartOnly, s)
			}
		}
		key := fmt.Sprint(restartOnly)
		if seen[key] {
			continue
		}
		seen[key] = true
		if err := v.VerifyStartup(ctx, restartOnly); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return &UsageError{Msg: fmt.Sprintf("the %s server cannot be restarted, and the plan needs restart-only values it does not have: %v",
			r.m.Server.Provider, errors.Join(errs...))}
	}
	return nil
}

// checkSchema refuses, before the first cell, a schema holding tables the
// workload does not define, unless Force: benchmatrix only ever creates and
// drops its own sbtestN tables, and will not load next to other data.
func (r *Runner) checkSchema(ctx context.Context) error {
	ft, ok := r.srv.(server.Borrowed)
	if !ok {
		return nil
	}
	ours := r.workloadTable()
	foreign, err := ft.ForeignTables(ctx, r.schema, ours)
	if err != nil {
		return err
	}
	var same, other []string
	for _, t := range foreign {
		if ours(strings.Fields(t)[0]) {
			same = append(same, t)
		} else {
			other = append(other, t)
		}
	}
	if len(same) > 0 {
		// Never over someone's table, --force or not: prepare would drop it.
		return &UsageError{Msg: fmt.Sprintf("schema %s holds tables of the workload's names that benchmatrix did not create (%s); "+
			"they are never used or dropped: give another [server] schema, or drop them yourself", r.schema, strings.Join(same, ", "))}
	}
	if len(other) > 0 && !r.cfg.Force {
		return &UsageError{Msg: fmt.Sprintf("schema %s holds tables the workload does not define (%s); run with --force to prepare "+
			"next to them (only sbtestN tables benchmatrix created are ever dropped) or give another [server] schema", r.schema, strings.Join(other, ", "))}
	}
	return nil
}

// workloadTable reports whether a table is of a workload's names: sbtestN,
// or a table some cell's engine creates (engine.Data's Tables).
func (r *Runner) workloadTable() func(string) bool {
	names := map[string]bool{}
	for _, c := range r.plan.Cells {
		for _, t := range c.Workload.Data().Tables {
			names[t] = true
		}
	}
	return func(t string) bool { return names[t] || workloadTableRE.MatchString(t) }
}

// startupFor is [server.config] plus the cell's variables that can only be
// set at start.
func (r *Runner) startupFor(c experiment.Cell) []server.Setting {
	var out []server.Setting
	for _, p := range r.m.Server.Config {
		out = append(out, server.Setting{Name: p.Name, Value: p.Value})
	}
	for _, p := range c.Server {
		if r.needsRestart(p.Name) {
			out = append(out, server.Setting{Name: p.Name, Value: p.Value})
		}
	}
	return out
}

// needsRestart is the plan's decision (catalog.RestartNeed on the server's
// flavor; before the first start, on either flavor, so that the first
// start has every startup option), plus the variables the server refused
// to SET as read-only although the catalogue did not list them.
func (r *Runner) needsRestart(name string) bool {
	n := catalog.VariableName(name)
	return r.readOnly[n] || catalog.RestartNeed(catalog.TargetOf(r.flavor, r.version), n) != catalog.Dynamic
}

func (r *Runner) openDB(dbName string) *sql.DB {
	cfg := r.srv.Endpoint()
	cfg.DBName = dbName
	connect := r.cfg.Connector
	if connect == nil {
		connect = mysql.NewConnector
	}
	conn, err := connect(cfg)
	if err != nil {
		// NewConnector only fails on a malformed config, which we built.
		panic(err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	return db
}

// checkVariables refuses, before the first cell, server variables the
// server does not have, and records the server's full variable set.
func (r *Runner) checkVariables(ctx context.Context, run *record.Run) error {
	db := r.openDB("")
	defer db.Close()
	all, err := server.Variables(ctx, db)
	if err != nil {
		return err
	}
	run.Variables = all
	if err := r.checkConnections(all); err != nil {
		return err
	}
	if err := r.checkDisk(); err != nil {
		return err
	}
	var unknown []string
	seen := map[string]bool{}
	for _, c := range r.plan.Cells {
		for _, p := range c.Server {
			n := catalog.VariableName(p.Name)
			if seen[n] {
				continue
			}
			seen[n] = true
			if _, ok := all[n]; !ok {
				unknown = append(unknown, p.Name)
			}
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return &UsageError{Msg: fmt.Sprintf("%s: unknown server variable(s) %s: the %s server (%s) has no such variable and they are not workload options",
			r.m.Path, strings.Join(unknown, ", "), r.flavor, run.Server.Version)}
	}
	return nil
}

// createSchema makes the workload's schema on a new server.
func (r *Runner) createSchema(ctx context.Context) error {
	db := r.openDB("")
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+r.schema+"`"); err != nil {
		return fmt.Errorf("create database %s: %w", r.schema, err)
	}
	return nil
}

func axisNames(m *experiment.Manifest) []string {
	var out []string
	for _, ax := range m.Axes {
		out = append(out, ax.Name)
	}
	return out
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func samePlan(a []record.PlanCell, b []experiment.Cell) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		ca, cb := a[i].Workload.Common(), b[i].Workload.Common()
		if a[i].Name != b[i].Name || a[i].Repeat != b[i].Repeat || ca.Time != cb.Time || ca.Warmup != cb.Warmup {
			return false
		}
	}
	return true
}

func sameSettings(a, b []server.Setting) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(s []server.Setting) []string {
		out := make([]string, len(s))
		for i, x := range s {
			out[i] = catalog.VariableName(x.Name) + "=" + x.Value
		}
		sort.Strings(out)
		return out
	}
	ka, kb := key(a), key(b)
	for i := range ka {
		if ka[i] != kb[i] {
			return false
		}
	}
	return true
}
