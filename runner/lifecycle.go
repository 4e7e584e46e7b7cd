package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/lifecycle"
	"benchmatrix/record"
	"benchmatrix/record/parts"
	"benchmatrix/server"
)

// A cell's lifecycle: the phases every cell goes through (lifecycle.Phase),
// in order, each under a deadline, with a watchdog beside them that ends
// the cell when the server stops answering. Features take part through
// the hooks of package lifecycle, listed in features.go; this file knows
// none of them by name. cellRun is the lifecycle.Cell the hooks receive.

// Bounds of the phases that the plan does not size.
const (
	// startDeadline bounds starting or healing a server (a cluster's
	// nodes joining); the sandbox's own start gives up well before.
	startDeadline = 5 * time.Minute
	// fixedDeadline bounds the phases of a few statements (checks,
	// limits and their disk self-check, bringing a server back).
	fixedDeadline = 2 * time.Minute
	// loadFloor is the least a load is given; loadRowsPerSecond the
	// slowest load rate allowed above it (10x below the plan's estimate,
	// experiment.Plan.Estimate, of 100,000 rows a second).
	loadFloor         = 5 * time.Minute
	loadRowsPerSecond = 10000
	// measureMargin is what the measure phase gets past the window and
	// its grace: the engine's own bounded stop, plus closing connections.
	measureMargin = 5 * time.Second
	// connectPerThread is what the engine is given to open and prepare
	// each worker's connection before its clock starts (1,000 threads took
	// 2 minutes under the race detector on a shared 2-core machine, and
	// more than the 250 ms a thread first allowed on that machine with
	// other jobs running). It is a backstop: a server that stops answering
	// is found by the watchdog within seconds, whatever this allows.
	connectPerThread = time.Second
)

// DefaultUnresponsive is how long the server may leave a ping unanswered
// before the cell ends as "the server stopped answering": far above what
// a loaded or resource-limited server takes to answer one (a SELECT-free
// COM_PING on its own connection, which no table lock blocks).
const DefaultUnresponsive = 5 * time.Second

// pingEvery is how often the watchdog pings the server.
const pingEvery = 500 * time.Millisecond

// deadline is how long phase p of cell c may take, derived from the plan:
//   - start/verify: startDeadline (a fixed bound: nothing in the plan sizes it);
//   - load: the plan's rows at loadRowsPerSecond, at least loadFloor (a
//     snapshot or cache restore is faster than a load);
//   - prewarm: as a load (it reads what a load wrote);
//   - drain: the policy's drain cap plus the settle bound;
//   - warm-up and measure (one engine run): connectPerThread per thread
//     (the workers connect before the engine's clock starts), plus the
//     warm-up (or its cap when automatic), the duration, the grace and
//     measureMargin; none
//     for a run bounded by a number of events or a slap cell (the watchdog
//     still ends either when the server stops answering);
//   - collect: the settle bound, two minutes when profiling (perf report),
//     the replicas' catch-up bound plus the settle bound on a cluster;
//   - the others: fixedDeadline.
func (r *Runner) deadline(c *experiment.Cell, p lifecycle.Phase) time.Duration {
	o := c.Workload.Common()
	switch p {
	case lifecycle.PhaseStart:
		return startDeadline
	case lifecycle.PhaseLoad, lifecycle.PhasePrewarm:
		rows := c.Workload.Data().Rows()
		return max(loadFloor, time.Duration(rows/loadRowsPerSecond)*time.Second)
	case lifecycle.PhaseDrain:
		return c.Policy.DrainCap + settleTimeout
	case lifecycle.PhaseWarmup, lifecycle.PhaseMeasure:
		if d := c.Engine(); d == nil || d.RunsToEnd || o.Time <= 0 {
			return 0
		}
		warm := o.Warmup
		if c.Policy.WarmupAuto {
			warm = c.Policy.WarmupCap
		}
		return time.Duration(max(o.Threads, 1))*connectPerThread + warm + o.Time + r.cfg.Grace + measureMargin
	case lifecycle.PhaseSearch:
		return r.searchDeadline(c)
	case lifecycle.PhaseCollect:
		d := settleTimeout
		if c.Policy.Profile.On() {
			d = fixedDeadline
		}
		if c.Topology.IsCluster() {
			// The nodes' data check waits for the replicas to apply what
			// the primary committed (VerifyTimeout), after the observers.
			d = max(d, lifecycle.VerifyTimeout+settleTimeout)
		}
		return d
	}
	return fixedDeadline
}

// searchDeadline bounds the capacity search phase: the search hook's
// steps, each with its workers' connecting, the grace and the margin of an
// engine run, and the reload after the steps when they change the data.
func (r *Runner) searchDeadline(c *experiment.Cell) time.Duration {
	if !c.Searches() {
		return fixedDeadline
	}
	var d time.Duration
	for _, nh := range r.hooks {
		if s, ok := nh().(lifecycle.SearchHook); ok {
			n, step := s.Steps(c)
			d += time.Duration(n) * (step + time.Duration(max(c.Workload.Common().Threads, 1))*connectPerThread + r.cfg.Grace + measureMargin)
		}
	}
	if c.Workload.Data().Changes {
		d += r.deadline(c, lifecycle.PhaseLoad) // the reload after the steps
	}
	return d
}

// StoppedError ends a cell whose server stopped answering, or whose phase
// passed its deadline.
type StoppedError struct {
	Phase lifecycle.Phase
	// Silent is how long the server had left a ping unanswered; zero when
	// the phase's deadline passed instead.
	Silent time.Duration
	// Deadline is the phase's deadline that passed.
	Deadline time.Duration
	// Err is what the phase's own work returned, if anything.
	Err error
}

func (e *StoppedError) Error() string {
	msg := fmt.Sprintf("the server stopped answering in %s: no answer for %.1f s", e.Phase, e.Silent.Seconds())
	if e.Silent == 0 {
		msg = fmt.Sprintf("%s did not end within its deadline of %s (the server stopped answering in %s?)", e.Phase, e.Deadline, e.Phase)
	}
	// What the phase's work said of a silent server is the silence's
	// consequence (a connection cut, a statement cancelled): not repeated.
	if e.Silent == 0 && e.Err != nil && !errors.Is(e.Err, context.Canceled) && !errors.Is(e.Err, context.DeadlineExceeded) {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg
}

func (e *StoppedError) Unwrap() error { return e.Err }

// cellRun is one cell on its way through the phases: the phase it is in,
// the watchdog, and the hooks of the features that take part.
type cellRun struct {
	r        *Runner
	c        *experiment.Cell
	res      *record.Cell
	hooks    []lifecycle.Hook
	workload engine.Workload // the cell's engine (workloadOf)
	// configured: the cell's settings are in force (configure set them);
	// a restart sets them again (restarted).
	configured bool

	ctx    context.Context // ends when the server stops answering
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	phase lifecycle.Phase
	// stop is set once the watchdog found the server silent.
	stop *StoppedError
	// silentSince is the server's last answer before it went silent,
	// silentFound when the watchdog gave up on the next ping.
	silentSince, silentFound time.Time
	// runOK is set when the engine's run returned its result.
	runOK bool
	// engineStart is the wall time of the engine's clock's zero in the
	// warm-up and measure phases (the first interval tells it).
	engineStart time.Time
	// windowEnd is the wall time the measured window ends (once the
	// engine's clock is known).
	windowEnd time.Time
	killed    bool
	// offset is where the engine's clock starts on the cell's intervals
	// (after an automatic warm-up).
	offset time.Duration

	dog     *sql.DB
	dogStop context.CancelFunc
	dogDone chan struct{}
	cleanup []func()
}

func (r *Runner) newCellRun(ctx context.Context, c *experiment.Cell, res *record.Cell) *cellRun {
	cr := &cellRun{r: r, c: c, res: res, workload: r.workloadOf(c.Workload)}
	cr.ctx, cr.cancel = context.WithCancelCause(ctx)
	for _, nh := range r.hooks { // features.go
		cr.hooks = append(cr.hooks, nh())
	}
	return cr
}

var _ lifecycle.Cell = (*cellRun)(nil)

// What the hooks may use of the cell (lifecycle.Cell).

func (cr *cellRun) Planned() *experiment.Cell    { return cr.c }
func (cr *cellRun) Record() *record.Cell         { return cr.res }
func (cr *cellRun) Plan() *experiment.Plan       { return cr.r.plan }
func (cr *cellRun) Server() server.Server        { return cr.r.srv }
func (cr *cellRun) OpenDB(schema string) *sql.DB { return cr.r.openDB(schema) }
func (cr *cellRun) Schema() string               { return cr.r.schema }
func (cr *cellRun) OutDir() string               { return cr.r.cfg.OutDir }
func (cr *cellRun) Log() io.Writer               { return cr.r.log }
func (cr *cellRun) Progress(what string)         { cr.r.cfg.Progress.Phase(what) }
func (cr *cellRun) Change() experiment.Change    { return cr.r.planned(cr.c, cr.res) }
func (cr *cellRun) RunOK() bool                  { return cr.runOK }
func (cr *cellRun) Stopped() bool                { return cr.stopped() != nil }
func (cr *cellRun) DataLost()                    { cr.r.loaded = "" }

// Reload loads the cell's data again as o; a restore's restart sets the
// cell's settings again (ensureData).
func (cr *cellRun) Reload(ctx context.Context, o engine.Spec) error {
	cr.r.loaded = ""
	return cr.r.ensureData(ctx, cr, o)
}

// Restart is a restart of the server as a lifecycle event, whatever asks
// for it (the cell's startup options, a smaller memory limit, a cold
// start, a cluster that did not heal, a dead server): the server comes
// back on startup, counted as server time, and restarted puts the cell's
// settings back.
func (cr *cellRun) Restart(ctx context.Context) error {
	return cr.restart(ctx, cr.r.srv.Startup())
}

func (cr *cellRun) restart(ctx context.Context, startup []server.Setting) error {
	if err := cr.r.restart(ctx, startup); err != nil {
		return err
	}
	cr.res.Restarted = true
	return cr.restarted(ctx)
}

// restarted is the one place a restart's consequence is dealt with, for
// a restart the lifecycle asked for (Restart) and for one the provider
// made itself (a snapshot saved or restored, the data cache's restore):
// once the cell's settings were set, a restart put the server's defaults
// back (a memory-limit restart once ran cells on them, and the snapshot
// after a first load lost tpcc-durability's first b1e1 its sync_binlog),
// so they are set again and read back. The limits hold over restarts
// (server.Limiter).
func (cr *cellRun) restarted(ctx context.Context) error {
	if !cr.configured {
		return nil // the load phase sets them after its restarts
	}
	return cr.configure(ctx)
}

// current is the phase the cell is in.
func (cr *cellRun) current() lifecycle.Phase {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return cr.phase
}

func (cr *cellRun) enter(p lifecycle.Phase) {
	cr.mu.Lock()
	cr.phase = p
	cr.mu.Unlock()
}

// stopped is the watchdog's verdict, or nil while the server answers.
func (cr *cellRun) stopped() *StoppedError {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return cr.stop
}

// in runs phase p's work under its deadline. When the watchdog stopped
// the cell, or the deadline passed, that is the phase's error, whatever
// the work returned.
func (cr *cellRun) in(p lifecycle.Phase, work func(ctx context.Context) error) error {
	if s := cr.stopped(); s != nil {
		return s
	}
	cr.enter(p)
	ctx := cr.ctx
	d := cr.r.deadline(cr.c, p)
	late := errors.New("deadline")
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, late)
		defer cancel()
	}
	err := work(ctx)
	if s := cr.stopped(); s != nil {
		if s.Err == nil {
			s.Err = err
		}
		return s
	}
	if err != nil && errors.Is(context.Cause(ctx), late) && cr.ctx.Err() == nil {
		return &StoppedError{Phase: p, Deadline: d, Err: err}
	}
	return err
}

// close ends the watchdog and what the phases left to undo (limits'
// pinning), in reverse.
func (cr *cellRun) close() {
	cr.stopWatchdog()
	for i := len(cr.cleanup) - 1; i >= 0; i-- {
		cr.cleanup[i]()
	}
	cr.cancel(nil)
}

// startWatchdog pings the server on its own connection every pingEvery.
// An answer, or a refusal (a server that is not running is the liveness
// check's to find), keeps the cell going; a ping left unanswered for
// Config.Unresponsive ends it: the cell's context is cancelled, and a
// server benchmatrix owns is killed (it is restarted as a dead one is)
// so that whatever waits on it returns at once. A server benchmatrix
// does not own is left as it is (a SIGCONT is not ours to send).
func (cr *cellRun) startWatchdog() {
	r := cr.r
	if r.srv == nil {
		return
	}
	for _, ev := range r.m.Events {
		if ev.Node == 1 && r.cluster() != nil { // features.go
			// The manifest freezes or cuts off node 1 (the one pinged) on
			// purpose: its silence is the experiment, bounded by the
			// engine's grace, not a fault.
			return
		}
	}
	cr.dog = r.openDB("")
	cr.dog.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.WithoutCancel(cr.ctx))
	cr.dogStop, cr.dogDone = cancel, make(chan struct{})
	limit := r.cfg.Unresponsive
	if limit <= 0 {
		limit = DefaultUnresponsive
	}
	go func() {
		defer close(cr.dogDone)
		tick := time.NewTicker(pingEvery)
		defer tick.Stop()
		answered := time.Now()
		for {
			sent, phase := time.Now(), cr.current()
			pctx, pcancel := context.WithTimeout(ctx, limit)
			err := cr.dog.PingContext(pctx)
			pcancel()
			if ctx.Err() != nil {
				return
			}
			if err != nil && errors.Is(err, context.DeadlineExceeded) || time.Since(sent) >= limit {
				// Silent since its last answer at the latest.
				cr.silent(phase, answered, time.Since(sent))
				return
			}
			answered = time.Now()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// silent records that the server stopped answering in phase, and ends the
// cell.
func (cr *cellRun) silent(phase lifecycle.Phase, since time.Time, silent time.Duration) {
	cr.mu.Lock()
	cr.stop = &StoppedError{Phase: phase, Silent: silent}
	cr.silentSince, cr.silentFound = since, time.Now()
	cr.mu.Unlock()
	r := cr.r
	fmt.Fprintf(r.log, "    the server stopped answering in %s (no answer for %.1f s)\n", phase, silent.Seconds())
	cr.cancel(cr.stop)
	if !cr.engineStopping() {
		cr.kill()
	}
}

// engineStopping reports whether the engine is past its measured window:
// it then cuts what is in flight by itself after the grace (a forced
// shutdown, recorded on its result), and the server is killed only after.
func (cr *cellRun) engineStopping() bool {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return !cr.engineStart.IsZero() && !cr.windowEnd.IsZero() && !time.Now().Before(cr.windowEnd)
}

// kill kills a server benchmatrix owns that stopped answering, so that
// whatever waits on it returns at once and the next cell starts it again
// as a dead one (fail, ensureServer). A server it does not own is left as
// it is: a SIGCONT is not benchmatrix's to send.
func (cr *cellRun) kill() {
	cr.mu.Lock()
	done := cr.killed
	cr.killed = true
	cr.mu.Unlock()
	r := cr.r
	if done || r.srv == nil {
		return
	}
	_, borrowed := r.srv.(server.Borrowed)
	if n, ok := r.srv.(server.Node); ok && !borrowed {
		fmt.Fprintf(r.log, "    killing it, to start it again\n")
		n.Crash()
	}
}

func (cr *cellRun) stopWatchdog() {
	if cr.dog == nil {
		return
	}
	cr.dogStop()
	<-cr.dogDone
	cr.dog.Close()
	cr.dog = nil
}

// Settle bounds what a hook asks the server after the run
// (settleTimeout): nothing more once it stopped answering.
func (cr *cellRun) Settle(ctx context.Context) (context.Context, context.CancelFunc) {
	if cr.stopped() != nil {
		c, cancel := context.WithCancel(ctx)
		cancel()
		return c, cancel
	}
	return context.WithTimeout(ctx, settleTimeout)
}

// observe starts the hooks' observers, before the warm-up.
func (cr *cellRun) observe() error {
	if s := cr.stopped(); s != nil {
		return s
	}
	for _, h := range cr.hooks {
		if o, ok := h.(lifecycle.ObserveHook); ok {
			if err := o.Observe(cr.ctx, cr); err != nil {
				return err
			}
		}
	}
	return nil
}

// collect is the collect phase: every hook collects, in the list's
// order, under the phase's deadline; the first error is returned. It
// runs after a failed run too (runOK false), and after the server stopped
// answering: then the frozen seconds of the measured window are a stall.
func (cr *cellRun) collect() error {
	if cr.stopped() == nil {
		cr.enter(lifecycle.PhaseCollect)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(cr.ctx), cr.r.deadline(cr.c, lifecycle.PhaseCollect))
	defer cancel()
	var first error
	for _, h := range cr.hooks {
		if ch, ok := h.(lifecycle.CollectHook); ok {
			if err := ch.Collect(ctx, cr); err != nil && first == nil {
				first = err
			}
		}
	}
	cr.frozenStall()
	return first
}

// windowDone reports whether the measured window of the run with options
// o had ended when the watchdog found the server silent.
func (cr *cellRun) windowDone(o engine.Common) bool {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.engineStart.IsZero() || o.Time <= 0 {
		return false
	}
	return !cr.silentFound.Before(cr.engineStart.Add(o.Warmup + o.Time))
}

// silentBeforeEnd is how long before the window's end the server stopped
// answering.
func (cr *cellRun) silentBeforeEnd(o engine.Common) time.Duration {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return max(0, cr.engineStart.Add(o.Warmup+o.Time).Sub(cr.silentSince))
}

// frozenStall makes the measured intervals from the moment the server
// stopped answering one stall episode on the cell, unless the detector
// found one there already: a frozen server is a stall, and the detector
// takes a low run at the end of the window for the drain, and one that
// covers most of the window for the level.
func (cr *cellRun) frozenStall() {
	from, ok := cr.silentFrom()
	if !ok {
		return
	}
	res := cr.res
	var idx []int // the measured intervals, as the detector indexes them
	for i, iv := range res.Intervals {
		if iv.Phase == engine.PhaseRun && iv.Seconds() > 0 {
			idx = append(idx, i)
		}
	}
	first := -1
	for k, i := range idx {
		if res.Intervals[i].End > from {
			first = k
			break
		}
	}
	if first < 0 {
		return // silent after the window: nothing measured was frozen
	}
	if res.Stalls == nil {
		res.Stalls = &parts.StallReport{}
	}
	st := res.Stalls
	for _, ep := range st.Episodes {
		if ep.Start <= first && first < ep.End {
			return
		}
	}
	ep := parts.Episode{Start: first, End: len(idx), Min: -1}
	var secs float64
	for k := first; k < len(idx); k++ {
		iv := res.Intervals[idx[k]]
		tps := float64(iv.Events) / iv.Seconds()
		if ep.Min < 0 || tps < ep.Min {
			ep.Min = tps
		}
		if st.Median > 0 {
			ep.Deficit += max(0, 1-tps/st.Median)
		} else {
			ep.Deficit++
		}
		secs += iv.Seconds()
	}
	ep.Zero, ep.Deep = ep.Min == 0, true
	st.Episodes = append(st.Episodes, ep)
	st.Count++
	st.TotalSeconds += secs
	st.LongestSeconds = max(st.LongestSeconds, secs)
	if st.TrailingIgnored > 0 && ep.End == len(idx) {
		st.TrailingIgnored = 0 // the frozen end is the stall, not a drain
	}
	note := fmt.Sprintf("the server stopped answering %.1f s into the cell's run: %.0f s frozen in the measured window", from.Seconds(), secs)
	if st.Text == "" || st.Count == 1 {
		st.Text = fmt.Sprintf("1 stall: the server stopped answering (%.0f s)", secs)
	} else {
		st.Text += "; " + note
	}
	res.ObserveNotes = append(res.ObserveNotes, note)
}

// workloadOf is the Workload that runs a cell's workload: the configured
// one, or else its engine's. A workload no engine runs gets one that says
// so on every call.
func (r *Runner) workloadOf(s engine.Spec) engine.Workload {
	if r.cfg.Workload != nil {
		return r.cfg.Workload
	}
	d, ok := experiment.Engines.Of(s)
	if !ok {
		return noEngine{s.Workload()}
	}
	return d.New(engine.Env{Log: r.log, Procs: r.cfg.Procs})
}

// noEngine is the Workload of a workload no engine runs.
type noEngine struct{ name string }

func (n noEngine) err() error                                                   { return fmt.Errorf("workload %q: no engine runs it", n.name) }
func (n noEngine) Prepare(context.Context, *mysql.Config, engine.Options) error { return n.err() }
func (n noEngine) Cleanup(context.Context, *mysql.Config, engine.Options) error { return n.err() }
func (n noEngine) Prewarm(context.Context, *mysql.Config, engine.Options) error { return n.err() }
func (n noEngine) Run(context.Context, *mysql.Config, engine.Options, func(engine.Interval)) (*engine.Result, error) {
	return nil, n.err()
}

// runCell takes one cell through the phases. A failure fails the cell, not
// the run; a server that stopped answering is brought back for the next
// cell when benchmatrix owns it.
func (r *Runner) runCell(ctx context.Context, c *experiment.Cell) *record.Cell {
	res := &record.Cell{Name: c.Name, Index: c.Index, Scenario: c.Scenario, Params: c.Params, Repeat: c.Repeat,
		Started: time.Now(), Workload: c.Workload}
	serverBefore := r.serverTime
	defer func() {
		res.WallSeconds = time.Since(res.Started).Seconds()
		res.ServerSeconds = (r.serverTime - serverBefore).Seconds()
	}()
	defer func() { res.Change = r.did(c, res) }()
	cr := r.newCellRun(ctx, c, res)
	err := cr.run()
	cr.close()
	if cr.stopped() != nil {
		cr.kill() // after the engine's own stop, when it was past its window
	}
	switch {
	case err == nil:
		res.Status = record.CellOK
	case ctx.Err() != nil:
		res.Status, res.Error = record.CellFailed, "interrupted"
	default:
		bctx, cancel := context.WithTimeout(ctx, r.deadline(c, lifecycle.PhaseBetween))
		r.fail(bctx, res, err)
		cancel()
	}
	return res
}

// run is the phases in order; it returns the first phase's error.
func (cr *cellRun) run() error {
	r, c, res := cr.r, cr.c, cr.res
	if r.srv != nil && c.Image == r.image && !r.topologyChanged(c) {
		cr.startWatchdog() // the running server is the cell's: watched from the start
	}
	err := cr.in(lifecycle.PhaseStart, func(ctx context.Context) error {
		if err := cr.ensureServer(ctx); err != nil {
			return err
		}
		return cr.hooksOf(ctx, lifecycle.PhaseStart)
	})
	if err != nil {
		return err
	}
	if lr, ok := r.srv.(server.LogReader); ok {
		off := lr.LogOffset()
		defer func() { res.ServerLogLines = lr.LogFrom(off) }()
	}
	if cr.dog == nil {
		cr.startWatchdog()
	}
	if err := cr.in(lifecycle.PhaseLoad, func(ctx context.Context) error { return cr.prepare(ctx) }); err != nil {
		return err
	}
	for _, p := range []lifecycle.Phase{lifecycle.PhaseAfterLoad, lifecycle.PhaseLimits} {
		if err := cr.in(p, func(ctx context.Context) error { return cr.hooksOf(ctx, p) }); err != nil {
			return err
		}
	}
	return cr.measure()
}

// hooksOf runs the hooks of phase p (start, the load's end, after-load
// checks, limits), in the list's order, until one fails.
func (cr *cellRun) hooksOf(ctx context.Context, p lifecycle.Phase) error {
	for _, h := range cr.hooks {
		var err error
		if h, ok := h.(lifecycle.StartHook); ok && p == lifecycle.PhaseStart {
			err = h.Start(ctx, cr)
		}
		if h, ok := h.(lifecycle.LoadedHook); ok && p == lifecycle.PhaseLoad {
			err = h.Loaded(ctx, cr)
		}
		if h, ok := h.(lifecycle.AfterLoadHook); ok && p == lifecycle.PhaseAfterLoad {
			err = h.AfterLoad(ctx, cr)
		}
		if h, ok := h.(lifecycle.LimitsHook); ok && p == lifecycle.PhaseLimits {
			var undo func()
			undo, err = h.Limits(ctx, cr)
			if undo != nil {
				cr.cleanup = append(cr.cleanup, undo)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// interval passes an engine interval to the hooks that hear them, and
// moves the cell from warm-up to measure at the warm-up's last one.
func (cr *cellRun) interval(iv engine.Interval, warmup, window time.Duration) {
	cr.mu.Lock()
	if cr.engineStart.IsZero() {
		cr.engineStart = time.Now().Add(-iv.End)
		if window > 0 {
			cr.windowEnd = cr.engineStart.Add(warmup + window)
		}
	}
	if cr.phase == lifecycle.PhaseWarmup && iv.Phase == engine.PhaseWarmup && iv.End >= warmup {
		cr.phase = lifecycle.PhaseMeasure
	}
	cr.mu.Unlock()
	for _, h := range cr.hooks {
		if ih, ok := h.(lifecycle.IntervalHook); ok {
			ih.Interval(iv)
		}
	}
}

// silentFrom is when, on the engine's clock, the server stopped
// answering; ok is false when it did not, or not while the engine ran.
func (cr *cellRun) silentFrom() (time.Duration, bool) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.stop == nil || cr.engineStart.IsZero() || cr.silentSince.Before(cr.engineStart) {
		return 0, false
	}
	return cr.silentSince.Sub(cr.engineStart) + cr.offset, true
}
