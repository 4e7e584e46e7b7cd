package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"benchmatrix/experiment"
	"benchmatrix/oltp"
	"benchmatrix/results"
	"benchmatrix/server"
)

// aliver is implemented by providers that can tell whether their server
// process still runs.
type aliver interface{ Alive() bool }

func (r *Runner) alive() bool {
	if a, ok := r.srv.(aliver); ok {
		return a.Alive()
	}
	return true
}

// runCell takes one cell through configure → prepare → warm up → measure.
// A failure fails the cell, not the run.
func (r *Runner) runCell(ctx context.Context, c *experiment.Cell) *results.Cell {
	res := &results.Cell{Name: c.Name, Index: c.Index, Scenario: c.Scenario, Params: c.Params, Repeat: c.Repeat,
		Started: time.Now(), Workload: c.Workload}
	defer func() { res.WallSeconds = time.Since(res.Started).Seconds() }()
	fail := func(err error) *results.Cell {
		res.Status = results.CellFailed
		res.Error = err.Error()
		if !r.alive() {
			res.ServerLog = r.srv.LogTail(20)
			res.Error = "the server died: " + res.Error
			r.recover(ctx)
		}
		return res
	}

	if !r.alive() {
		r.recover(ctx)
	}
	if lr, ok := r.srv.(server.LogReader); ok {
		off := lr.LogOffset()
		defer func() { res.ServerLogLines = lr.LogFrom(off) }()
	}
	if err := r.restartIfNeeded(ctx, c, res); err != nil {
		return fail(err)
	}
	// Data before SET GLOBAL: a snapshot restore restarts the server.
	if err := r.ensureData(ctx, c.Workload, res); err != nil {
		return fail(fmt.Errorf("prepare: %w", err))
	}
	if err := r.configure(ctx, c, res); err != nil {
		return fail(err)
	}
	o := c.Workload
	fmt.Fprintf(r.log, "    warm-up %s, measure %s\n", o.Warmup, o.Time)
	var intervals []oltp.Interval
	cfg := r.srv.Endpoint()
	cfg.DBName = Schema
	result, err := r.cfg.Workload.Run(ctx, cfg, o, func(iv oltp.Interval) { intervals = append(intervals, iv) })
	res.Intervals = intervals
	if experiment.ChangesData(o) {
		r.loaded = ""
	}
	if err != nil {
		if ctx.Err() != nil {
			res.Status = results.CellFailed
			res.Error = "interrupted"
			return res
		}
		return fail(fmt.Errorf("run: %w", err))
	}
	res.Result = result
	res.Status = results.CellOK
	return res
}

// recover brings a dead server back on its datadir (crash recovery) so
// the matrix can go on; the data is reloaded for the next cell.
func (r *Runner) recover(ctx context.Context) {
	r.loaded = ""
	fmt.Fprintf(r.log, "    the server is not running; restarting it\n")
	if err := r.srv.Restart(ctx, r.srv.Startup()); err != nil {
		fmt.Fprintf(r.log, "    restart failed: %v\n", err)
	}
}

// restartIfNeeded restarts the server if the cell's startup options differ
// from the running ones.
func (r *Runner) restartIfNeeded(ctx context.Context, c *experiment.Cell, res *results.Cell) error {
	want := r.startupFor(*c)
	if sameSettings(want, r.srv.Startup()) {
		return nil
	}
	fmt.Fprintf(r.log, "    restart with %s\n", describe(want))
	if err := r.srv.Restart(ctx, want); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	res.Restarted = true
	return nil
}

// configure applies the cell's dynamic variables and reads back what is in
// effect. A variable the server refuses as read-only is moved to the
// startup options and the server restarted with it.
func (r *Runner) configure(ctx context.Context, c *experiment.Cell, res *results.Cell) error {
	db := r.openDB("")
	defer db.Close()
	dyn := r.dynamicFor(*c)
	if len(dyn) > 0 {
		fmt.Fprintf(r.log, "    set %s\n", describe(dyn))
	}
	_, err := server.ApplyGlobals(ctx, db, dyn)
	var ro *server.ReadOnlyError
	if errors.As(err, &ro) {
		// Not in the catalogue, but the server says it needs a restart.
		r.readOnly[ro.Name] = true
		db.Close()
		if err := r.restartIfNeeded(ctx, c, res); err != nil {
			return err
		}
		return r.configure(ctx, c, res)
	}
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	all := make([]server.Setting, 0, len(c.Server))
	for _, p := range c.Server {
		all = append(all, server.Setting{Name: p.Name, Value: p.Value})
	}
	if _, err := server.CheckGlobals(ctx, db, all); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	names := append([]string(nil), server.RecordedVariables...)
	for _, s := range all {
		names = append(names, server.VariableName(s.Name))
	}
	for _, p := range r.m.Server.Config {
		names = append(names, server.VariableName(p.Name))
	}
	eff, err := server.Variables(ctx, db, names...)
	if err != nil {
		return err
	}
	res.Effective = eff
	return nil
}

// SnapshotMinRows is the data size from which a loaded data shape is saved
// as a datadir snapshot, so that a later cell with the same shape restores
// it instead of loading again.
const SnapshotMinRows = 100000

// ensureData loads the cell's data unless the same shape is loaded and
// untouched; a saved snapshot of the shape is restored instead of loading.
func (r *Runner) ensureData(ctx context.Context, o oltp.Options, res *results.Cell) error {
	key := experiment.DataKey(o)
	if key == r.loaded {
		res.Data = "reused"
		return nil
	}
	start := time.Now()
	defer func() { res.PrepareSeconds = time.Since(start).Seconds() }()
	snap, canSnap := r.srv.(server.Snapshotter)
	if canSnap && snap.HasSnapshot(key) {
		fmt.Fprintf(r.log, "    restore the %s data from its snapshot\n", o.Workload)
		if err := snap.Restore(ctx, key, r.srv.Startup()); err != nil {
			r.loaded, r.loadedOpts = "", nil
			return err
		}
		res.Data = "restored"
		r.setLoaded(key, o)
		return nil
	}
	cfg := r.srv.Endpoint()
	cfg.DBName = Schema
	if r.loadedOpts != nil {
		if err := r.cfg.Workload.Cleanup(ctx, cfg, *r.loadedOpts); err != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
	}
	if err := r.cfg.Workload.Cleanup(ctx, cfg, o); err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	fmt.Fprintf(r.log, "    prepare %s: %d table(s) x %d rows\n", o.Workload, o.Tables, o.TableSize)
	if err := r.cfg.Workload.Prepare(ctx, cfg, o); err != nil {
		r.loaded, r.loadedOpts = "", nil
		return err
	}
	res.Data = "loaded"
	r.setLoaded(key, o)
	if canSnap && !experiment.EmptyTables(o) && int64(o.Tables)*int64(o.TableSize) >= SnapshotMinRows {
		fmt.Fprintf(r.log, "    save a snapshot of the loaded data\n")
		if err := snap.Snapshot(ctx, key); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	return nil
}

func (r *Runner) setLoaded(key string, o oltp.Options) {
	r.loaded = key
	oc := o
	r.loadedOpts = &oc
}

func describe(s []server.Setting) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x.Name + "=" + x.Value
	}
	if out == "" {
		return "the base configuration"
	}
	return out
}
