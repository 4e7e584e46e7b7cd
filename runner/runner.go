// Package runner executes a plan: for each cell it reconfigures the server
// (SET GLOBAL, or a restart when a variable needs one), loads data when the
// data shape changed, warms up, measures, and hands the cell to the results
// writer before the next cell starts.
package runner

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/experiment"
	"benchmatrix/observe"
	"benchmatrix/oltp"
	"benchmatrix/results"
	"benchmatrix/server"
)

// Version is the tool version recorded in results; cmd sets it at link time.
var Version = "dev"

// DefaultSchema is the database the workload's tables live in unless the
// manifest says otherwise.
const DefaultSchema = "sbtest"

// Workload is the engine as the runner uses it; oltpWorkload is the real
// one, tests may substitute a fake.
type Workload interface {
	Prepare(ctx context.Context, cfg *mysql.Config, o oltp.Options) error
	Cleanup(ctx context.Context, cfg *mysql.Config, o oltp.Options) error
	Prewarm(ctx context.Context, cfg *mysql.Config, o oltp.Options) error
	Run(ctx context.Context, cfg *mysql.Config, o oltp.Options, report func(oltp.Interval)) (*oltp.Result, error)
}

// StartSpec is what a new server must be.
type StartSpec struct {
	Startup []server.Setting
	Image   string // Docker image, for provider docker
}

// StartFunc starts (or connects to) a server.
type StartFunc func(ctx context.Context, spec StartSpec) (server.Server, error)

// Config says where results go and how to reach servers.
type Config struct {
	OutDir   string
	Log      io.Writer // progress lines; nil means none
	Start    StartFunc
	Workload Workload
	// Resume, when set, is the stored run.json of an interrupted run in
	// OutDir: its finished cell runs are kept and not run again.
	Resume *results.Run
	// Progress, if set, hears which cell runs and in what phase.
	Progress Progress
	// Force lets prepare use a schema that holds tables the workload does
	// not define (an external server's).
	Force bool
	// Seeds are the random seeds of a stored run's cell runs (by
	// results.RunKey), for run --rerun; cells without one get a new seed.
	Seeds map[string]int64
}

// Runner executes one plan.
type Runner struct {
	cfg  Config
	plan *experiment.Plan
	m    *experiment.Manifest
	log  io.Writer

	srv        server.Server
	flavor     server.Flavor
	image      string // the running server's image (docker)
	schema     string
	loaded     string        // data key of what is loaded, "" for nothing
	loadedOpts *oltp.Options // the options it was loaded with, for cleanup
	readOnly   map[string]bool
}

// ErrCellsFailed is returned (wrapped) when the run finished but some cells
// failed; every finished cell is in the results.
var ErrCellsFailed = errors.New("some cells failed")

// UsageError is a problem with the experiment found against the server
// before the first cell (an unknown variable, say). The CLI exits 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Run executes the plan and writes the results directory. On interrupt
// (ctx cancelled) it keeps every finished cell, marks the run interrupted
// and returns ctx.Err().
func Run(ctx context.Context, plan *experiment.Plan, cfg Config) (*results.Run, error) {
	if cfg.Workload == nil {
		cfg.Workload = OLTP{}
	}
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	if cfg.Progress == nil {
		cfg.Progress = noProgress{}
	}
	defer cfg.Progress.Close()
	schema := plan.Manifest.Server.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	r := &Runner{cfg: cfg, plan: plan, m: plan.Manifest, log: log, readOnly: map[string]bool{}, schema: schema}
	return r.run(ctx)
}

func (r *Runner) run(ctx context.Context) (_ *results.Run, err error) {
	m := r.m
	sum := sha256.Sum256([]byte(m.Source))
	run := &results.Run{
		Tool:          results.Tool{Name: "benchmatrix", Version: Version, GoVersion: runtime.Version()},
		Experiment:    m.Name,
		Description:   m.Description,
		ManifestPath:  m.Path,
		Manifest:      m.Source,
		ManifestHash:  hex.EncodeToString(sum[:]),
		Baseline:      m.Baseline,
		Columns:       r.plan.Columns,
		MetricColumns: metricColumns(r.plan),
		Axes:          axisNames(m),
		Pivot:         m.Pivot,
		ServerConfig:  m.Server.Config,
		Plan:          r.plan.Cells,
		Order:         r.plan.Order,
		Seed:          r.plan.Seed,
		Status:        results.StatusRunning,
		Started:       time.Now(),
		Host:          hostFacts(""),
	}
	done := map[string]bool{}
	var w *results.Writer
	if old := r.cfg.Resume; old != nil {
		if old.ManifestHash != run.ManifestHash {
			return nil, &UsageError{Msg: fmt.Sprintf("cannot resume %s: the manifest changed since that run (sha256 %s, now %s)",
				r.cfg.OutDir, short(old.ManifestHash), short(run.ManifestHash))}
		}
		if !samePlan(old.Plan, r.plan.Cells) {
			return nil, &UsageError{Msg: fmt.Sprintf("cannot resume %s: the plan differs from the stored one (different --duration, --warmup or --repeats?)", r.cfg.OutDir)}
		}
		run.Started = old.Started
		run.Cells = old.Cells
		run.Notes = append(old.Notes, fmt.Sprintf("resumed at %s with %d of %d cell runs finished",
			time.Now().UTC().Format(time.RFC3339), len(old.Cells), len(r.plan.Cells)))
		for _, c := range old.Cells {
			done[results.RunKey(c.Name, c.Repeat)] = true
		}
		w, err = results.Reopen(r.cfg.OutDir, old)
	} else {
		w, err = results.Create(r.cfg.OutDir, r.plan.Columns, run.MetricColumns)
	}
	if err != nil {
		return nil, err
	}
	if err := w.WriteRun(run); err != nil {
		return nil, err
	}
	defer func() {
		run.Finished = time.Now()
		run.Fingerprint = results.ComputeFingerprint(run)
		switch {
		case ctx.Err() != nil:
			run.Status = results.StatusInterrupted
		case err != nil && !errors.Is(err, ErrCellsFailed):
			run.Status = results.StatusFailed
			run.Notes = append(run.Notes, "run stopped: "+err.Error())
		default:
			run.Status = results.StatusFinished
		}
		if werr := w.WriteRun(run); werr != nil && err == nil {
			err = werr
		}
		if werr := w.WriteSummary(run); werr != nil && err == nil {
			err = werr
		}
	}()

	var todo []int
	for i, c := range r.plan.Cells {
		if !done[results.RunKey(c.Name, c.Repeat)] {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		fmt.Fprintf(r.log, "every cell run has finished already\n")
		return run, nil
	}
	first := r.plan.Cells[todo[0]]
	if err := r.startServer(ctx, first); err != nil {
		return run, err
	}
	defer func() { r.stopServer() }()
	info := r.srv.Info()
	run.Server = info
	run.Host = hostFacts(info.Datadir)
	if err := r.verifyStartup(ctx); err != nil {
		return run, err
	}
	if err := r.checkSchema(ctx); err != nil {
		return run, err
	}
	if err := r.checkVariables(ctx, run); err != nil {
		return run, err
	}
	if err := w.WriteRun(run); err != nil {
		return run, err
	}

	failed := 0
	for _, c := range run.Cells {
		if c.Status != results.CellOK {
			failed++
		}
	}
	for _, i := range todo {
		if ctx.Err() != nil {
			return run, ctx.Err()
		}
		cell := &r.plan.Cells[i]
		fmt.Fprintf(r.log, "[%d/%d] %s (repeat %d)\n", i+1, len(r.plan.Cells), cell.Name, cell.Repeat)
		r.cfg.Progress.Cell(i, len(r.plan.Cells), *cell)
		res := r.runCell(ctx, cell)
		r.cfg.Progress.CellDone()
		if ctx.Err() != nil {
			// An interrupted cell is not a finished one: keep it out of the
			// results so a later run can redo it whole.
			return run, ctx.Err()
		}
		if res.Status != results.CellOK {
			failed++
			fmt.Fprintf(r.log, "    FAILED: %s\n", res.Error)
		} else {
			fmt.Fprintf(r.log, "    %.1f tps, %.1f qps, p95 %.3f ms, p99 %.3f ms\n",
				res.Result.TPS(), res.Result.QPS(), res.Result.Latency.P95, res.Result.Latency.P99)
		}
		if err := w.AppendCell(res); err != nil {
			return run, fmt.Errorf("write results: %w", err)
		}
		run.Cells = append(run.Cells, *res)
		if err := w.WriteRun(run); err != nil {
			return run, err
		}
	}
	if failed > 0 {
		return run, fmt.Errorf("%d of %d cell runs failed: %w", failed, len(r.plan.Cells), ErrCellsFailed)
	}
	return run, nil
}

// startServer starts (or connects to) the server the cell needs.
func (r *Runner) startServer(ctx context.Context, c experiment.Cell) error {
	fmt.Fprintf(r.log, "starting %s server%s\n", r.m.Server.Provider, map[bool]string{true: " " + c.Image, false: ""}[c.Image != ""])
	srv, err := r.cfg.Start(ctx, StartSpec{Startup: r.startupFor(c), Image: c.Image})
	if err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	r.srv, r.image, r.loaded, r.loadedOpts = srv, c.Image, "", nil
	info := srv.Info()
	r.flavor = info.Flavor
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

// startupVerifier is a server that cannot restart (an external one): every
// restart-only value the plan needs must already be in effect.
type startupVerifier interface {
	VerifyStartup(ctx context.Context, startup []server.Setting) error
}

// verifyStartup refuses, before the first cell, a plan that needs restart-
// only values a server cannot be restarted into, naming each variable.
func (r *Runner) verifyStartup(ctx context.Context) error {
	v, ok := r.srv.(startupVerifier)
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
	ft, ok := r.srv.(foreignTabler)
	if !ok || r.cfg.Force {
		return nil
	}
	foreign, err := ft.ForeignTables(ctx, r.schema, workloadTableRE.MatchString)
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		return &UsageError{Msg: fmt.Sprintf("schema %s holds tables the workload does not define (%s); run with --force to prepare "+
			"next to them (only sbtestN tables are ever created or dropped) or give another [server] schema", r.schema, strings.Join(foreign, ", "))}
	}
	return nil
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

func (r *Runner) needsRestart(name string) bool {
	n := server.VariableName(name)
	if r.flavor == "" {
		// Before the first start the flavor is unknown: take the catalogue
		// of either, so the first start already has its startup options.
		return r.readOnly[n] || experiment.RestartOnly(n)
	}
	return r.readOnly[n] || server.RestartOnly(r.flavor, n)
}

func (r *Runner) dynamicFor(c experiment.Cell) []server.Setting {
	var out []server.Setting
	for _, p := range c.Server {
		if !r.needsRestart(p.Name) {
			out = append(out, server.Setting{Name: p.Name, Value: p.Value})
		}
	}
	return out
}

func (r *Runner) openDB(dbName string) *sql.DB {
	cfg := r.srv.Endpoint()
	cfg.DBName = dbName
	conn, err := mysql.NewConnector(cfg)
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
func (r *Runner) checkVariables(ctx context.Context, run *results.Run) error {
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
			n := server.VariableName(p.Name)
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

// metricColumns are the sampled columns of intervals.csv: the observer's,
// when any cell observes.
func metricColumns(p *experiment.Plan) []string {
	for _, c := range p.Cells {
		if c.Policy.Observe {
			return observe.Columns()
		}
	}
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func samePlan(a, b []experiment.Cell) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Repeat != b[i].Repeat || a[i].Workload.Time != b[i].Workload.Time ||
			a[i].Workload.Warmup != b[i].Workload.Warmup {
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
			out[i] = server.VariableName(x.Name) + "=" + x.Value
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
