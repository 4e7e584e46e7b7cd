package runner

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/analysis"
	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/lifecycle"
	"benchmatrix/record"
	"benchmatrix/results"
	"benchmatrix/server"
)

// noSpace names a full filesystem under the datadir as the cause of a
// failure: the server's "table is full" (1114) or "no space" (errno 28) in
// the error or its error log, or less than 1% of the filesystem left.
func (r *Runner) noSpace(err error) string {
	dir := r.srv.Info().Datadir
	// The server's own words, in the error or in its log: a server that
	// ran out of space may also just die, or fail to restart.
	text := err.Error() + "\n" + r.srv.LogTail(40)
	full := false
	for _, sign := range []string{"Error 1114", "is full", "No space left", "errno: 28", "Errcode: 28", "error 28", "out of disk space"} {
		full = full || strings.Contains(text, sign)
	}
	var st syscall.Statfs_t
	if dir != "" && syscall.Statfs(dir, &st) == nil {
		free := int64(st.Bavail) * int64(st.Bsize)
		total := int64(st.Blocks) * int64(st.Bsize)
		if full || (total > 0 && free < total/100) {
			return fmt.Sprintf("no space left on the filesystem under %s (%s free)", dir, humanBytes(free))
		}
	}
	if full {
		return "no space left for the server's data"
	}
	return ""
}

// dying reports whether the server is gone after a failure. A killed
// server closes its connections a moment before its process is reaped, so
// this waits up to a second for the exit to show.
func (r *Runner) dying() bool {
	for i := 0; i < 20; i++ {
		if !r.alive() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// alive asks a provider with the liveness capability; one without it is
// taken to be alive (its failures show as errors, not as a death).
func (r *Runner) alive() bool {
	if a, ok := r.srv.(server.Liveness); ok {
		return a.Alive()
	}
	return true
}

// fail marks the cell failed with err, naming a full disk or a dead server
// as the cause; a dead server is brought back for the next cell.
func (r *Runner) fail(ctx context.Context, res *record.Cell, err error) {
	res.Status = record.CellFailed
	res.Error = err.Error()
	if r.srv == nil {
		return
	}
	if note := r.noSpace(err); note != "" {
		res.Error = note + ": " + res.Error
	}
	var stopped *StoppedError
	if errors.As(err, &stopped) && stopped.Silent > 0 {
		// Killed by the lifecycle's watchdog when benchmatrix owns it
		// (lifecycle.go): started again, not a death to report.
		if r.dying() {
			res.Error += "; killed and started again"
			r.recover(ctx)
		}
		return
	}
	if r.dying() {
		res.ServerLog = r.srv.LogTail(20)
		why := "the server died"
		if k, ok := r.srv.(server.OOMReporter); ok {
			why = cmp.Or(k.MemoryKilled(), why)
		}
		if died := r.unplanned(); len(died) > 0 && why == "the server died" { // features.go
			why = strings.Join(died, "; ")
		}
		res.Error = why + ": " + res.Error
		r.recover(ctx)
	}
}

// topologyChanged reports whether the cell needs another cluster than the
// running one (another kind, node count or replication mode).
func (r *Runner) topologyChanged(c *experiment.Cell) bool {
	return r.srv != nil && c.Topology.Key() != r.topo
}

// ensureServer starts the server the cell needs (a new image is a new
// server, on which the data is loaded again), and brings back one that
// died since the last cell (before the cell's settings: recover).
func (cr *cellRun) ensureServer(ctx context.Context) error {
	r, c, res := cr.r, cr.c, cr.res
	if r.srv == nil || c.Image != r.image || r.topologyChanged(c) {
		r.stopServer()
		if err := r.startServer(ctx, *c); err != nil {
			return err
		}
		res.Restarted = true
	}
	if r.fresh {
		r.fresh, res.Change.Start = false, true
	}
	if !r.alive() {
		r.recover(ctx)
	}
	return nil
}

// prepare is the load phase: it restarts the server if the cell's startup
// options ask for it, applies the cell's dynamic variables, loads or
// restores the data, and ends with the hooks of the load's end (a cold
// start).
func (cr *cellRun) prepare(ctx context.Context) error {
	r, c, res := cr.r, cr.c, cr.res
	if err := cr.restartIfNeeded(ctx); err != nil {
		return err
	}
	res.Change.Cold = r.planned(c, res).Cold // change.go
	// The cell's globals are set before the data is loaded (prepare may
	// need them: max_connections for many loader threads); the restarts
	// of a restore or a snapshot set them again (restarted).
	if err := cr.configure(ctx); err != nil {
		return err
	}
	if err := r.ensureData(ctx, cr, c.Workload); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	return cr.hooksOf(ctx, lifecycle.PhaseLoad)
}

// measure is the prewarm, drain, warm-up, measure and collect phases: the
// engine prewarms and the buffer pool drains as the policy says, then the
// hooks' observers start, the engine warms up and measures, and the hooks
// collect what they saw, whether or not the run went well.
func (cr *cellRun) measure() error {
	r, c, res := cr.r, cr.c, cr.res
	o := c.Workload.With(func(cm *engine.Common) {
		cm.Grace = r.cfg.Grace
		if cm.Seed == 0 {
			// sysbench's 0 means "from the clock"; pick the seed here and
			// record it, so that run --rerun can repeat the id sequences.
			cm.Seed = r.cfg.Seeds[results.RunKey(c.Name, c.Repeat)]
			if cm.Seed == 0 {
				cm.Seed = time.Now().UnixNano()&(1<<53-1) | 1
			}
		}
	})
	res.RandSeed = o.Common().Seed
	cfg := r.srv.Endpoint()
	cfg.DBName = r.schema
	for _, h := range cr.hooks {
		if e, ok := h.(lifecycle.EndpointHook); ok {
			e.Endpoint(cr, cfg)
		}
	}
	if c.Policy.Prewarm {
		err := cr.in(lifecycle.PhasePrewarm, func(ctx context.Context) error {
			r.cfg.Progress.Phase("prewarm")
			fmt.Fprintf(r.log, "    prewarm\n")
			start := time.Now()
			if err := cr.workload.Prewarm(ctx, cfg, o.Options); err != nil {
				return fmt.Errorf("prewarm: %w", err)
			}
			res.PrewarmSeconds = time.Since(start).Seconds()
			return nil
		})
		if err != nil {
			return err
		}
	}
	err := cr.in(lifecycle.PhaseDrain, func(ctx context.Context) error {
		if c.Policy.Drain {
			r.cfg.Progress.Phase("drain")
			if err := r.drain(ctx, c, res); err != nil {
				return fmt.Errorf("drain: %w", err)
			}
		}
		if lim := r.m.WaitQuiet; lim > 0 {
			waited, quiet := r.waitQuiet(ctx, lim) // features.go
			res.QuietWaitSeconds, res.QuietReached = waited.Seconds(), quiet
		}
		return nil
	})
	if err != nil {
		return err
	}
	if c.Searches() {
		if o, err = cr.search(cfg, o); err != nil {
			return err
		}
	}
	// A restart after the load phase set the globals (a smaller memory
	// limit, a cold start, the capacity search's reload) must not leave
	// the cell measured on the server's defaults: what it names is read
	// once more, the last thing before the engine starts.
	if err := cr.in(lifecycle.PhaseWarmup, func(ctx context.Context) error { return r.settingsInForce(ctx, c) }); err != nil {
		return err
	}
	var intervals []engine.Interval
	err = cr.observe()
	if err == nil {
		err = cr.warmAndRun(cfg, o, &intervals)
	}
	res.Intervals = intervals
	if cerr := cr.collect(); err == nil {
		err = cerr
	}
	return err
}

// search is the capacity search phase: the search hook returns the options
// of the measured run.
func (cr *cellRun) search(cfg *mysql.Config, o engine.Spec) (engine.Spec, error) {
	for _, h := range cr.hooks {
		s, ok := h.(lifecycle.SearchHook)
		if !ok {
			continue
		}
		err := cr.in(lifecycle.PhaseSearch, func(ctx context.Context) error {
			var err error
			o, err = s.Search(ctx, cr, cfg, cr.workload, o)
			return err
		})
		if err != nil {
			return o, fmt.Errorf("capacity search: %w", err)
		}
	}
	return o, nil
}

// warmAndRun is the warm-up and measure phases: one engine run under one
// deadline (automatic warm-up runs the engine once more before it). A
// server that stops answering after the window's end leaves a complete
// window: the cell keeps it, with the frozen end as a stall (collect).
func (cr *cellRun) warmAndRun(cfg *mysql.Config, o engine.Spec, intervals *[]engine.Interval) error {
	r, c, res := cr.r, cr.c, cr.res
	d := r.deadline(c, lifecycle.PhaseMeasure)
	ctx := cr.ctx
	late := errors.New("deadline")
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, late)
		defer cancel()
	}
	var offset time.Duration
	if c.Policy.WarmupAuto {
		ivs, steady, err := r.autoWarmup(ctx, cr.workload, cfg, o, c.Policy.WarmupCap, func(iv engine.Interval) { cr.interval(iv, 0, 0) })
		if s := cr.stopped(); s != nil {
			*intervals = ivs
			return s
		}
		if err := ctx.Err(); err != nil {
			if errors.Is(context.Cause(ctx), late) {
				return &StoppedError{Phase: lifecycle.PhaseWarmup, Deadline: d, Err: err}
			}
			return err
		}
		if err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		*intervals = ivs
		if n := len(ivs); n > 0 {
			offset = ivs[n-1].End
		}
		res.WarmupSeconds = offset.Seconds()
		res.WarmupSteady = steady
		o = o.With(func(cm *engine.Common) { cm.Warmup = 0 })
		if steady {
			fmt.Fprintf(r.log, "    steady after %.0fs of warm-up\n", offset.Seconds())
		} else {
			fmt.Fprintf(r.log, "    not steady after the %s warm-up cap; measuring anyway\n", c.Policy.WarmupCap)
		}
	} else {
		res.WarmupSeconds = o.Common().Warmup.Seconds()
	}
	cm := o.Common()
	if cm.Warmup <= 0 {
		cr.enter(lifecycle.PhaseMeasure)
	}
	cr.mu.Lock()
	cr.engineStart, cr.windowEnd, cr.offset = time.Time{}, time.Time{}, offset // the measured run's clock, not the automatic warm-up's
	cr.mu.Unlock()
	r.cfg.Progress.Phase("warm-up and measure")
	fmt.Fprintf(r.log, "    warm-up %s, measure %s\n", cm.Warmup, cm.Time)
	for _, h := range cr.hooks {
		if b, ok := h.(lifecycle.RunHook); ok {
			b.BeforeRun(cr.ctx, cr, cm) // the cell's context: a profile outlives the run until collect
		}
	}
	result, err := cr.workload.Run(ctx, cfg, o.Options, func(iv engine.Interval) {
		cr.interval(iv, cm.Warmup, cm.Time)
		iv.Start += offset
		iv.End += offset
		*intervals = append(*intervals, iv)
	})
	cr.runOK = err == nil
	if o.Data().Changes {
		r.loaded = ""
	}
	if s := cr.stopped(); s != nil {
		if s.Err == nil {
			s.Err = err
		}
		if s.Phase != lifecycle.PhaseMeasure || result == nil || !cr.windowDone(cm) {
			return s
		}
		// The window ran its full length before the silence was found:
		// a measurement of what the server did, its frozen end included.
		note := fmt.Sprintf("the server stopped answering %.1f s before the measured window's end; the window is kept, "+
			"its frozen end reported as a stall", cr.silentBeforeEnd(cm).Seconds())
		if result.ForcedShutdown && result.Elapsed > cm.Time {
			// The grace the engine waited for a frozen server is not
			// measured time: the window's rates are over the window.
			note += fmt.Sprintf("; rates over the %s window, not the %.1f s until the cut", cm.Time, result.Elapsed.Seconds())
			result.Elapsed = cm.Time
		}
		res.ObserveNotes = append(res.ObserveNotes, note)
		fmt.Fprintf(r.log, "    %s\n", note)
		cr.runOK, err = true, nil
	}
	if err != nil {
		if errors.Is(context.Cause(ctx), late) && cr.ctx.Err() == nil {
			return &StoppedError{Phase: cr.current(), Deadline: d, Err: err}
		}
		return fmt.Errorf("run: %w", err)
	}
	if d, ok := experiment.Engines.Of(o); ok {
		h := d.HeadlineFigure() // what the cell is compared on, recorded as it ran
		result.Headline = &h
	}
	res.Result = result
	if result.ForcedShutdown {
		note := fmt.Sprintf("%d transaction(s) still in flight %s after the window were cut (the server did not answer)",
			result.Unfinished, r.cfg.Grace)
		res.ObserveNotes = append(res.ObserveNotes, note)
		fmt.Fprintf(r.log, "    %s\n", note)
	}
	return nil
}

// recover brings a dead server back on its datadir (crash recovery) so
// the matrix can go on; the data is reloaded for the next cell.
func (r *Runner) recover(ctx context.Context) {
	r.loaded = ""
	fmt.Fprintf(r.log, "    the server is not running; restarting it\n")
	if err := r.restart(ctx, r.srv.Startup()); err != nil {
		fmt.Fprintf(r.log, "    restart failed: %v\n", err)
	}
}

var workloadTableRE = regexp.MustCompile(`^sbtest[0-9]+$`)

// restartIfNeeded restarts the server if the cell's startup options differ
// from the running ones.
func (cr *cellRun) restartIfNeeded(ctx context.Context) error {
	r, c, res := cr.r, cr.c, cr.res
	want := r.startupFor(*c)
	planned := len(r.planned(c, res).SettingsRestart()) > 0 && !res.Restarted // change.go
	if !planned && sameSettings(want, r.srv.Startup()) {
		return nil
	}
	res.Change.Restart = experiment.StartChanges(params(r.srv.Startup()), params(want), r.needsRestart)
	r.cfg.Progress.Phase("restart")
	fmt.Fprintf(r.log, "    restart with %s\n", describe(want))
	if err := cr.restart(ctx, want); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	return nil
}

// configure applies the cell's dynamic variables and reads back what is in
// effect. A variable the server refuses as read-only is moved to the
// startup options and the server restarted with it. Once it returned
// without an error the cell's settings are in force, and every restart
// sets them again (restarted).
func (cr *cellRun) configure(ctx context.Context) error {
	r, c, res := cr.r, cr.c, cr.res
	cr.configured = false
	db := r.openDB("")
	defer db.Close()
	dyn := r.dynamic(c, res) // change.go: the plan's, less what the server refused
	if len(dyn) > 0 {
		fmt.Fprintf(r.log, "    set %s\n", describe(dyn))
	}
	res.Change.Dynamic = params(dyn)
	named := map[string]bool{}
	for _, p := range c.Server {
		named[catalog.VariableName(p.Name)] = true
	}
	resets, err := r.resetsFor(ctx, db, dyn, named) // globals.go
	if err != nil {
		return err
	}
	if len(resets) > 0 {
		fmt.Fprintf(r.log, "    put back %s (set by a cell before, not named by this one)\n", describe(resets))
		res.Change.Reset = params(resets)
	}
	set := append(append([]server.Setting(nil), dyn...), resets...)
	apply := func() (map[string]string, error) { return server.ApplyGlobals(ctx, db, set) }
	if ga, ok := r.srv.(server.Borrowed); ok {
		// The provider remembers what it changed, to put it back.
		apply = func() (map[string]string, error) { return ga.ApplyGlobals(ctx, set) }
	}
	_, err = apply()
	var ro *server.ReadOnlyError
	if errors.As(err, &ro) {
		// Not in the catalogue, but the server says it needs a restart.
		r.readOnly[ro.Name] = true
		db.Close()
		if err := cr.restartIfNeeded(ctx); err != nil {
			return err
		}
		return cr.configure(ctx)
	}
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	for _, h := range cr.hooks {
		if sh, ok := h.(lifecycle.SettingsHook); ok {
			if err := sh.Settings(ctx, cr, set); err != nil {
				return err
			}
		}
	}
	r.resetDone(resets)
	all := cellSettings(c)
	if _, err := server.CheckGlobals(ctx, db, all); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	names := append([]string(nil), catalog.RecordedVariables...)
	for _, s := range all {
		names = append(names, catalog.VariableName(s.Name))
	}
	for _, p := range r.m.Server.Config {
		names = append(names, catalog.VariableName(p.Name))
	}
	for _, s := range resets {
		names = append(names, s.Name)
	}
	eff, err := server.Variables(ctx, db, names...)
	if err != nil {
		return err
	}
	res.Effective = eff
	cr.configured = true
	return nil
}

// cellSettings is every variable the cell names, as settings.
func cellSettings(c *experiment.Cell) []server.Setting {
	all := make([]server.Setting, 0, len(c.Server))
	for _, p := range c.Server {
		all = append(all, server.Setting{Name: p.Name, Value: p.Value})
	}
	return all
}

// settingsInForce reads back the variables the cell names just before its
// warm-up: configure read them back when it set them, but a restart since
// (each phase's restarts must set them again) would put the server's
// defaults back without a word.
func (r *Runner) settingsInForce(ctx context.Context, c *experiment.Cell) error {
	if r.srv == nil || len(c.Server) == 0 {
		return nil
	}
	db := r.openDB("")
	defer db.Close()
	all := cellSettings(c)
	if _, err := server.CheckGlobals(ctx, db, all); err != nil {
		return fmt.Errorf("the cell's settings are not in force before its measurement (a restart since they were set?): %w", err)
	}
	return nil
}

// ensureData loads the cell's data unless the same shape is loaded and
// untouched; a saved snapshot of the shape is restored instead of loading,
// or else a hook's copy (lifecycle.DataHook: the data cache). A restore and
// the snapshot saved after a load restart the server: restarted sets the
// cell's settings again (the snapshot's restart once ran
// tpcc-durability's first b1e1 on sync_binlog = 0 and failed it at the
// read-back).
func (r *Runner) ensureData(ctx context.Context, cr *cellRun, o engine.Spec) error {
	res := cr.res
	data := o.Data()
	key := data.Shape
	if key == r.loaded {
		res.Data = "reused"
		return nil
	}
	start := time.Now()
	defer func() { res.PrepareSeconds = time.Since(start).Seconds() }()
	snap, canSnap := r.srv.(server.Snapshotter)
	if canSnap && snap.HasSnapshot(key) {
		r.cfg.Progress.Phase("restore snapshot")
		fmt.Fprintf(r.log, "    restore the %s data from its snapshot\n", o.Workload())
		if err := snap.Restore(ctx, key, r.srv.Startup()); err != nil {
			r.loaded, r.loadedOpts = "", nil
			return err
		}
		res.Data = "restored"
		r.setLoaded(key, o)
		return cr.restarted(ctx)
	}
	for _, h := range cr.hooks {
		if d, ok := h.(lifecycle.DataHook); ok {
			done, err := d.Restore(ctx, cr, key, o)
			if done && err != nil {
				r.loaded, r.loadedOpts = "", nil
			}
			if err != nil {
				return err
			}
			if done {
				r.setLoaded(key, o)
				return cr.restarted(ctx)
			}
		}
	}
	cfg := r.srv.Endpoint()
	cfg.DBName = r.schema
	if r.loadedOpts != nil {
		if err := r.workloadOf(*r.loadedOpts).Cleanup(ctx, cfg, r.loadedOpts.Options); err != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
	}
	if err := cr.workload.Cleanup(ctx, cfg, o.Options); err != nil {
		return fmt.Errorf("cleanup: %w", err)
	}
	r.cfg.Progress.Phase("prepare")
	fmt.Fprintf(r.log, "    prepare %s: %d table(s) x %d rows\n", o.Workload(), len(data.Tables), data.RowsPerTable)
	if err := cr.workload.Prepare(ctx, cfg, o.Options); err != nil {
		r.loaded, r.loadedOpts = "", nil
		return err
	}
	res.Data = "loaded"
	r.setLoaded(key, o)
	if b, ok := r.srv.(server.Borrowed); ok {
		if err := b.Claim(ctx, r.schema, data.Tables); err != nil {
			return err
		}
	}
	if canSnap && data.Rows() >= lifecycle.SnapshotMinRows {
		fmt.Fprintf(r.log, "    save a snapshot of the loaded data\n")
		if err := snap.Snapshot(ctx, key); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		for _, h := range cr.hooks {
			if d, ok := h.(lifecycle.DataHook); ok {
				d.Snapshotted(ctx, cr, key, o)
			}
		}
		return cr.restarted(ctx)
	}
	return nil
}

func (r *Runner) setLoaded(key string, o engine.Spec) {
	r.loaded = key
	oc := o
	r.loadedOpts = &oc
}

// autoWarmup runs the workload until per-second tps is steady or the cap
// is reached; its intervals are returned as warm-up intervals.
func (r *Runner) autoWarmup(ctx context.Context, w engine.Workload, cfg *mysql.Config, o engine.Spec, limit time.Duration, hear func(engine.Interval)) ([]engine.Interval, bool, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	o = o.With(func(cm *engine.Common) { cm.Warmup, cm.Time, cm.Events, cm.ReportInterval = 0, limit, 0, time.Second })
	var ivs []engine.Interval
	var tps []float64
	steady := false
	r.cfg.Progress.Phase("warm-up until steady")
	fmt.Fprintf(r.log, "    warm-up until steady (at most %s): %s\n", limit, analysis.DefaultSettleRule)
	var reads *poolReads // warmup.go: the buffer pool's misses per second, beside tps
	if r.srv != nil {
		db := r.openDB("")
		db.SetMaxOpenConns(1)
		defer db.Close()
		reads = startPoolReads(wctx, db)
		defer reads.close()
	}
	_, err := w.Run(wctx, cfg, o.Options, func(iv engine.Interval) {
		iv.Phase = engine.PhaseWarmup
		hear(iv)
		ivs = append(ivs, iv)
		if s := iv.Seconds(); s > 0 {
			tps = append(tps, float64(iv.Events)/s)
		}
		if !steady && Steady(analysis.DefaultSettleRule, tps, reads.series()) {
			steady = true
			cancel()
		}
	})
	if err != nil && !(errors.Is(err, context.Canceled) && ctx.Err() == nil) {
		return ivs, steady, err
	}
	return ivs, steady, nil
}

// drain waits until the buffer pool's dirty pages fall below the policy's
// threshold, so every cell starts with the same flushing debt. Servers that
// do not flush while idle (MariaDB 10.5+ with its default low-water mark)
// are nudged (drainNudges) for the wait and put back after it, unless the
// cell itself sets one of those variables. The wait ends
// at the cap, or when the count stops falling, and is recorded either way.
func (r *Runner) drain(ctx context.Context, c *experiment.Cell, res *record.Cell) error {
	p := c.Policy
	db := r.openDB("")
	defer db.Close()
	start := time.Now()
	defer func() { res.DrainSeconds = time.Since(start).Seconds() }()
	nudged := false
	for _, s := range c.Server {
		for _, n := range drainNudges {
			nudged = nudged || catalog.VariableName(s.Name) == n.name
		}
	}
	best, bestAt := int64(-1), time.Now()
	for {
		dirty, total, err := dirtyPages(ctx, db)
		if err != nil {
			return err
		}
		limit := p.DrainPages
		if limit == 0 {
			limit = max(64, total/100)
		}
		res.DirtyPagesAtStart = dirty
		if dirty <= limit {
			return nil
		}
		if !nudged {
			nudged = true
			defer r.nudgeFlushing(ctx, db)()
		}
		if best < 0 || dirty < best {
			best, bestAt = dirty, time.Now()
		}
		if time.Since(start) > p.DrainCap || time.Since(bestAt) > 3*time.Second {
			fmt.Fprintf(r.log, "    %d dirty pages after %.0fs of waiting; starting anyway\n", dirty, time.Since(start).Seconds())
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// drainNudges make the page cleaner flush everything, fast: no dirty pages
// allowed, and an I/O budget far above the default 200 pages per second
// (which took 8-28 s to flush 2,500 pages on MariaDB 10.11, against about
// 1 s, one page-cleaner pass, with these). Set in this order (the maximum
// first, as the capacity may not exceed it), put back in reverse; the
// budgets are only ever raised.
var drainNudges = []struct{ name, value string }{
	{"innodb_io_capacity_max", "40000"},
	{"innodb_io_capacity", "20000"},
	{"innodb_max_dirty_pages_pct", "0"},
}

// nudgeFlushing sets drainNudges and returns what puts back each value it
// read. On a server benchmatrix does not own each original is journalled
// before the change, so that even a killed run's next one puts it back.
func (r *Runner) nudgeFlushing(ctx context.Context, db *sql.DB) (restore func()) {
	set := func(ctx context.Context, name, v string) error {
		_, err := db.ExecContext(ctx, "SET GLOBAL "+name+" = "+server.SQLValue(v))
		return err
	}
	if b, ok := r.srv.(server.Borrowed); ok {
		set = func(ctx context.Context, name, v string) error {
			_, err := b.ApplyGlobals(ctx, []server.Setting{{Name: name, Value: v}})
			return err
		}
	}
	type orig struct{ name, value string }
	var back []orig
	for _, n := range drainNudges {
		v, err := server.ReadGlobal(ctx, db, n.name)
		if err != nil {
			continue // not this server's variable
		}
		if n.name != "innodb_max_dirty_pages_pct" {
			if cur, err1 := strconv.ParseFloat(v, 64); err1 != nil || cur >= mustFloat(n.value) {
				continue
			}
		}
		// Put back even when the SET seemed to fail (a read-back that did
		// not match): setting the original is harmless.
		_ = set(ctx, n.name, n.value)
		back = append(back, orig{n.name, v})
	}
	return func() {
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for i := len(back) - 1; i >= 0; i-- {
			if err := set(rctx, back[i].name, back[i].value); err != nil {
				fmt.Fprintf(r.log, "    put back %s = %s after the drain: %v\n", back[i].name, back[i].value, err)
			}
		}
	}
}

func mustFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func dirtyPages(ctx context.Context, db *sql.DB) (dirty, total int64, err error) {
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_pages_dirty', 'Innodb_buffer_pool_pages_total')")
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			return 0, 0, err
		}
		if strings.EqualFold(k, "Innodb_buffer_pool_pages_dirty") {
			dirty = v
		} else {
			total = v
		}
	}
	return dirty, total, rows.Err()
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

func params(s []server.Setting) []experiment.Param {
	out := make([]experiment.Param, len(s))
	for i, x := range s {
		out[i] = experiment.Param{Name: x.Name, Value: x.Value}
	}
	return out
}

// restart restarts the server, counting the time as the server's.
func (r *Runner) restart(ctx context.Context, startup []server.Setting) error {
	start := time.Now()
	defer func() { r.serverTime += time.Since(start) }()
	return r.srv.Restart(ctx, startup)
}
