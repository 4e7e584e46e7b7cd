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
	"benchmatrix/oltp"
	"benchmatrix/results"
	"benchmatrix/server"
)

// Version is the tool version recorded in results; cmd sets it at link time.
var Version = "dev"

// Schema is the database the workload's tables live in.
const Schema = "sbtest"

// Workload is the engine as the runner uses it; oltpWorkload is the real
// one, tests may substitute a fake.
type Workload interface {
	Prepare(ctx context.Context, cfg *mysql.Config, o oltp.Options) error
	Cleanup(ctx context.Context, cfg *mysql.Config, o oltp.Options) error
	Prewarm(ctx context.Context, cfg *mysql.Config, o oltp.Options) error
	Run(ctx context.Context, cfg *mysql.Config, o oltp.Options, report func(oltp.Interval)) (*oltp.Result, error)
}

// StartFunc starts a server with the given startup options.
type StartFunc func(ctx context.Context, startup []server.Setting) (server.Server, error)

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
	r := &Runner{cfg: cfg, plan: plan, m: plan.Manifest, log: log, readOnly: map[string]bool{}}
	return r.run(ctx)
}

func (r *Runner) run(ctx context.Context) (_ *results.Run, err error) {
	m := r.m
	sum := sha256.Sum256([]byte(m.Source))
	run := &results.Run{
		Tool:         results.Tool{Name: "benchmatrix", Version: Version, GoVersion: runtime.Version()},
		Experiment:   m.Name,
		Description:  m.Description,
		ManifestPath: m.Path,
		Manifest:     m.Source,
		ManifestHash: hex.EncodeToString(sum[:]),
		Baseline:     m.Baseline,
		Columns:      r.plan.Columns,
		ServerConfig: m.Server.Config,
		Plan:         r.plan.Cells,
		Order:        r.plan.Order,
		Seed:         r.plan.Seed,
		Status:       results.StatusRunning,
		Started:      time.Now(),
		Host:         hostFacts(""),
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
		w, err = results.Create(r.cfg.OutDir, r.plan.Columns)
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
	fmt.Fprintf(r.log, "starting %s server\n", m.Server.Provider)
	srv, err := r.cfg.Start(ctx, r.startupFor(first))
	if err != nil {
		return run, fmt.Errorf("start server: %w", err)
	}
	r.srv = srv
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if serr := srv.Stop(stopCtx); serr != nil {
			fmt.Fprintf(r.log, "stop server: %v\n", serr)
		}
	}()
	info := srv.Info()
	r.flavor = info.Flavor
	run.Server = info
	run.Host = hostFacts(info.Datadir)
	fmt.Fprintf(r.log, "server: %s %s at %s\n", info.Flavor, info.Version, info.Address)

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
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+Schema); err != nil {
		return fmt.Errorf("create database %s: %w", Schema, err)
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
