package tpcc

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"benchmatrix/engine"
	"benchmatrix/oltp"
	"benchmatrix/sqlconn"

	"github.com/go-sql-driver/mysql"
)

// Keying and think times of the specification (clause 5.2.5.7): seconds
// before each transaction (keying) and the mean of the negative
// exponential think time after it. Off unless Options.Keying.
var (
	keyingSeconds = [numTypes]float64{18, 3, 2, 2, 2, 0}
	thinkSeconds  = [numTypes]float64{12, 12, 10, 5, 5, 0}
)

// TableSetError is a run whose tables are missing or smaller than asked.
type TableSetError struct{ Msg string }

func (e *TableSetError) Error() string { return e.Msg }

// checkTables makes sure every table set exists with at least Scale
// warehouses before a run; maxW answers a "SELECT MAX(w_id)" (valid:
// not NULL).
func checkTables(o *Options, maxW func(q string) (n int64, valid bool, err error)) error {
	for n := 1; n <= o.Tables; n++ {
		m, valid, err := maxW(fmt.Sprintf("SELECT MAX(w_id) FROM warehouse%d", n))
		if errno(err) == 1146 {
			return &TableSetError{Msg: fmt.Sprintf("table set %d does not exist (warehouse%d: %v); prepare it first with the same --tables=%d --scale=%d",
				n, n, err, o.Tables, o.Scale)}
		}
		if err != nil {
			return fmt.Errorf("check table set %d: %w", n, err)
		}
		if !valid || int(m) < o.Scale {
			return &TableSetError{Msg: fmt.Sprintf("table set %d has %d warehouses, the run asks for --scale=%d (prepare with the same --scale)",
				n, m, o.Scale)}
		}
	}
	return nil
}

// maxOn answers checkTables' question on a worker's connection.
func maxOn(c *sqlconn.Conn) func(q string) (int64, bool, error) {
	return func(q string) (int64, bool, error) {
		var r sqlconn.Rows
		if err := c.QueryRows([]byte(q), &r); err != nil {
			return 0, false, err
		}
		if r.Len() == 0 || r.Null(0, 0) {
			return 0, false, nil
		}
		return r.Int(0, 0), true, nil
	}
}

// maxOnDB answers it on a pool.
func maxOnDB(ctx context.Context, db *sql.DB) func(q string) (int64, bool, error) {
	return func(q string) (int64, bool, error) {
		var m sql.NullInt64
		err := db.QueryRowContext(ctx, q).Scan(&m)
		return m.Int64, m.Valid, err
	}
}

func errno(err error) uint16 { return sqlconn.Errno(err) }

// worker is one connection running events.
type worker struct {
	id   int
	link *sqlconn.Link // the socket under s.c, closed to end a statement in flight
	mu   sync.Mutex
	cur  *tally // since the last tick
	s    session
	// busy is the worker's time spent in events, for sysbench's fairness.
	busy   time.Duration
	events int64
}

// Run runs the mix on o.Threads connections for o.Warmup + o.Time (or
// o.Events events), as sysbench runs tpcc.lua: closed loop, each event one
// transaction drawn from the mix, an ignorable error (o.IgnoreErrors)
// counted and the event run again from the start after a ROLLBACK,
// anything else fatal. report gets every interval (o.Interval, or each
// second when 0), warm-up ones too.
func Run(ctx context.Context, cfg *mysql.Config, o Options, report func(Interval)) (*Result, error) {
	return RunWith(ctx, cfg, o, report, nil)
}

// RunWith is Run whose workers use blocking sockets when procs makes room
// for them in the scheduler (or GOMAXPROCS already has it), as the oltp
// engine's do (sqlconn.UseBlocking).
func RunWith(ctx context.Context, cfg *mysql.Config, o Options, report func(Interval), procs sqlconn.ProcReserver) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	blocking := sqlconn.UseBlocking(cfg, o.Threads, procs)
	cn, err := sqlconn.NewConnector(cfg, blocking)
	if err != nil {
		return nil, err
	}
	if blocking && procs != nil {
		defer procs.Reserve(o.Threads)()
	}
	seed := o.RandSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	// The run's NURand constants: C for 255 differs from a load's as the
	// specification requires (the load's, drawn from the same seed).
	loadC := newNuConst(newRng(seed, 0), -1)
	runC := newNuConst(newRng(seed, -1), loadC.c255)

	workers := make([]*worker, o.Threads)
	defer func() {
		for _, w := range workers {
			if w != nil {
				w.s.c.Close()
			}
		}
	}()
	for i := range workers {
		w := &worker{id: i, link: &sqlconn.Link{}, cur: newTally(), s: session{o: &o, g: newRng(seed, 1000+i), nc: &runC}}
		c, err := connect(ctx, cn, w.link, &o, i == 0)
		if err != nil {
			var te *TableSetError
			if errors.As(err, &te) {
				return nil, err
			}
			return nil, fmt.Errorf("connect worker %d: %w", i, err)
		}
		w.s.c = c
		workers[i] = w
	}

	runCtx, cancelWorkers := context.WithCancel(ctx)
	defer cancelWorkers()
	// stopWorkers ends the events in flight: their statements' sockets
	// are closed (the workers see runCtx done and drop the event).
	stopWorkers := func() {
		cancelWorkers()
		for _, w := range workers {
			w.link.Sever()
		}
	}
	var stop atomic.Bool
	var started atomic.Int64
	var fatal error
	var fatalOnce sync.Once
	t0 := time.Now()
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.loop(runCtx, cn, &o, &stop, &started); err != nil {
				fatalOnce.Do(func() { fatal = err })
				stop.Store(true)
			}
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	tick := o.Interval
	if tick <= 0 {
		tick = time.Second
	}
	measure := newTally()
	var measureStart, measureEnd time.Duration
	measuring := o.Warmup <= 0
	last := time.Duration(0)
	collect := func() *tally {
		t := newTally()
		for _, w := range workers {
			w.mu.Lock()
			cur := w.cur
			w.cur = newTally()
			w.mu.Unlock()
			t.add(cur)
		}
		return t
	}
	emit := func(now time.Duration, t *tally, ph engine.Phase) {
		if report != nil && now > last {
			report(t.interval(ph, last, now, o.Threads, o.Percentile))
		}
		last = now
	}
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	var warmTimer <-chan time.Time
	if o.Warmup > 0 {
		warmTimer = time.After(o.Warmup)
	}
	var endTimer <-chan time.Time
	if o.Time > 0 {
		endTimer = time.After(o.Warmup + o.Time)
	}
	var graceTimer <-chan time.Time
	interrupted := false
loop:
	for {
		select {
		case <-ticker.C:
			now := time.Since(t0)
			t := collect()
			ph := engine.PhaseWarmup
			if measuring {
				ph = engine.PhaseRun
				measure.add(t)
			}
			emit(now, t, ph)
		case <-warmTimer:
			now := time.Since(t0)
			t := collect()
			emit(now, t, engine.PhaseWarmup)
			measuring = true
			measureStart = now
			warmTimer = nil
		case <-endTimer:
			stop.Store(true)
			endTimer = nil
			if o.Grace > 0 {
				graceTimer = time.After(o.Grace)
			}
		case <-graceTimer:
			// In-flight events past the grace: their connections are
			// closed (the events are dropped).
			stopWorkers()
			graceTimer = nil
		case <-ctx.Done():
			interrupted = true
			stop.Store(true)
			stopWorkers()
			<-allDone
			break loop
		case <-allDone:
			break loop
		}
	}
	now := time.Since(t0)
	t := collect()
	if measuring {
		measure.add(t)
		if report != nil && now > last {
			// The stretch after the last tick: in the record, so that
			// the intervals add up to the result; not printed (sysbench
			// prints whole intervals only).
			iv := t.interval(engine.PhaseRun, last, now, o.Threads, o.Percentile)
			iv.Partial = true
			report(iv)
		}
	}
	measureEnd = now
	if fatal != nil {
		return nil, fatal
	}
	res := summarize(measure, workers, &o, measureEnd-measureStart)
	if interrupted {
		return res, ctx.Err()
	}
	return res, nil
}

func summarize(m *tally, workers []*worker, o *Options, elapsed time.Duration) *Result {
	so := oltp.DefaultOptions()
	so.Workload = "tpcc"
	so.Threads = o.Threads
	so.Time = o.Time
	so.Events = o.Events
	so.Warmup = o.Warmup
	so.ReportInterval = o.Interval
	so.Percentile = o.Percentile
	so.RandSeed = o.RandSeed
	so.Tables = o.Tables
	sr := &oltp.Result{Options: so, Result: engine.Result{Elapsed: elapsed, Events: m.Events, Reads: m.Reads, Writes: m.Writes, Others: m.Others,
		Errors: m.Errors, Reconnects: m.Reconnects, Latency: m.Latency(o.Percentile)}}
	// Threads fairness over the whole run (sysbench counts the warm-up
	// too when there is none to exclude).
	var ev, busy []float64
	for _, w := range workers {
		w.mu.Lock()
		ev = append(ev, float64(w.events))
		busy = append(busy, w.busy.Seconds())
		w.mu.Unlock()
	}
	sr.Fairness.EventsAvg, sr.Fairness.EventsStddev = oltp.MeanStddev(ev)
	sr.Fairness.TimeAvg, sr.Fairness.TimeStddev = oltp.MeanStddev(busy)
	res := &Result{Sysbench: sr, Errors: map[uint16]int64{}}
	var committed int64
	for _, typ := range Types() {
		if typ == Purge && !o.EnablePurge {
			continue
		}
		h := m.typeHist[typ] // min and max from it: the exact ones are every type's
		ts := TypeStats{Type: typ.String(), Committed: m.committed[typ], Restarts: m.restarts[typ],
			PerMin:  perMin(m.committed[typ], elapsed),
			Latency: (&engine.Tally{Events: h.TotalCount(), LatSum: m.typeSum[typ], Hist: h}).Latency(o.Percentile)}
		if ts.Latency != (engine.Latency{}) {
			ts.Latency.Min = float64(h.Min()) / 1000
			ts.Latency.Max = float64(h.Max()) / 1000
		}
		if typ == NewOrder {
			ts.RolledBack = m.rolledBack
		}
		if m.Events > 0 {
			ts.Share = float64(m.typeHist[typ].TotalCount()) / float64(m.Events)
		}
		committed += m.committed[typ]
		res.Types = append(res.Types, ts)
	}
	res.NOPM = perMin(m.committed[NewOrder], elapsed)
	res.TPM = perMin(committed, elapsed)
	for k, v := range m.codes {
		res.Errors[k] = v
	}
	if m.rolledBack > 0 {
		res.Errors[0] = m.rolledBack
	}
	return res
}

// ignorable tells whether err restarts the event.
func ignorable(o *Options, err error) bool {
	n := errno(err)
	if n == 0 {
		return false
	}
	return o.IgnoreAll || slices.Contains(o.IgnoreErrors, n)
}

// loop runs events until stop; an error it returns is fatal for the run.
func (w *worker) loop(ctx context.Context, cn driver.Connector, o *Options, stop *atomic.Bool, started *atomic.Int64) error {
	s := &w.s
	for !stop.Load() && ctx.Err() == nil {
		if o.Events > 0 && started.Add(1) > o.Events {
			return nil
		}
		begin := time.Now()
		restarts := [numTypes]int64{}
		codes := map[uint16]int64{}
		var errs, reconnects int64
		var typ Type
		for {
			typ = pick(s.g, o.EnablePurge, o.Mix)
			if o.Keying {
				if !sleepCtx(ctx, time.Duration(keyingSeconds[typ]*float64(time.Second))) {
					return nil
				}
				begin = time.Now()
			}
			err := s.run(typ)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return nil // stopped: the event in flight is dropped
			}
			n := errno(err)
			if !ignorable(o, err) {
				return fmt.Errorf("worker %d: %s: %w", w.id, typ, err)
			}
			errs++
			codes[n]++
			restarts[typ]++
			if slices.Contains(sqlconn.LostConnErrnos, n) {
				if err := w.reconnect(ctx, cn, o); err != nil {
					if ctx.Err() != nil {
						return nil // stopped while reconnecting
					}
					return fmt.Errorf("worker %d: reconnect: %w", w.id, err)
				}
				reconnects++
				continue
			}
			// sysbench-tpcc's before_restart_event.
			if err := s.exec("ROLLBACK"); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("worker %d: ROLLBACK after error %d: %w", w.id, n, err)
			}
		}
		ns := time.Since(begin).Nanoseconds()
		w.mu.Lock()
		t := w.cur
		t.record(typ, ns)
		t.Reads += s.c.Cnt.Reads
		t.Writes += s.c.Cnt.Writes
		t.Others += s.c.Cnt.Others
		s.c.Cnt = sqlconn.Counts{}
		t.Errors += errs
		t.Reconnects += reconnects
		for i := range numTypes {
			t.restarts[i] += restarts[i]
		}
		for k, v := range codes {
			t.codes[k] += v
		}
		if s.rolledBack {
			// sysbench-tpcc counts the rollback as an error.
			t.Errors++
			t.rolledBack++
		} else {
			t.committed[typ]++
		}
		w.events++
		w.busy += time.Duration(ns)
		w.mu.Unlock()
		if o.Keying {
			think := -math.Log(max(1-s.g.float(), 1e-12)) * thinkSeconds[typ]
			think = min(think, 10*thinkSeconds[typ])
			if !sleepCtx(ctx, time.Duration(think*float64(time.Second))) {
				return nil
			}
		}
	}
	return nil
}

func (w *worker) reconnect(ctx context.Context, cn driver.Connector, o *Options) error {
	cnt := w.s.c.Cnt
	w.s.c.Close()
	for {
		c, err := connect(ctx, cn, w.link, o, false)
		if err == nil {
			c.Cnt = cnt
			w.s.c = c
			return nil
		}
		if !sleepCtx(ctx, time.Millisecond) {
			return ctx.Err()
		}
	}
}

// connect dials a worker's connection, its socket in link, and sets its
// session up as sysbench-tpcc does (sessionStatements), not counted;
// first: the run's first connection, which checks the tables before.
func connect(ctx context.Context, cn driver.Connector, link *sqlconn.Link, o *Options, first bool) (*sqlconn.Conn, error) {
	c, err := sqlconn.Dial(sqlconn.WithLink(ctx, link), cn)
	if err != nil {
		return nil, err
	}
	if first {
		if err := checkTables(o, maxOn(c)); err != nil {
			c.Close()
			return nil, err
		}
	}
	var r sqlconn.Rows
	if err := c.QueryRows([]byte(isolationQuery), &r); err != nil {
		c.Close()
		return nil, err
	}
	name := ""
	if r.Len() > 0 {
		name = r.String(0, 0)
	}
	qs, err := sessionStatements(name, o)
	for _, q := range qs {
		if err == nil {
			err = c.Exec([]byte(q))
		}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	c.Cnt = sqlconn.Counts{}
	return c, nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
