package oltp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/engine"
	"benchmatrix/sqlconn"
)

// lateThreshold: an open-loop event is late when it starts more than this
// after its scheduled arrival.
const lateThreshold = time.Millisecond

// checkRun validates o for a run.
func checkRun(o *Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.ReinsertID == "auto" && !o.AutoInc && ReadsOption(*o, "reinsert_id") {
		return fmt.Errorf("reinsert_id=auto needs auto_inc=on: without AUTO_INCREMENT the re-INSERT without an id cannot get one")
	}
	if o.TableSize < 1 && !OnlyInserts(*o) {
		return fmt.Errorf("%s needs table_size >= 1", o.Workload)
	}
	return nil
}

func run(ctx context.Context, cfg *mysql.Config, o Options, report func(Interval), procs sqlconn.ProcReserver) (*Result, error) {
	if err := checkRun(&o); err != nil {
		return nil, err
	}
	dist, err := NewDist(o)
	if err != nil {
		return nil, err
	}
	o.RandSeed = effectiveSeed(o)
	blocking := useBlocking(cfg, o.Threads, procs)
	quiet := &cutLogger{}
	cn, err := newConnector(quiet.quietAfterCut(cfg), blocking)
	if err != nil {
		return nil, err
	}
	if blocking && procs != nil {
		defer procs.Reserve(o.Threads)()
	}
	sh := &shared{
		o: &o, connector: cn, stopCh: make(chan struct{}), fatalCh: make(chan struct{}),
		limit: o.Events, lateAfter: lateThreshold,
	}
	uniq := NewUnique(o.RandSeed)
	warm := o.Warmup > 0
	if !warm {
		sh.phase.Store(phRun)
	}

	// thread_init: every worker connects and prepares before the clocks
	// start.
	workers := make([]*worker, o.Threads)
	stats := make([]*workerStats, o.Threads)
	for i := range workers {
		sess, err := newSession(env{o: &o, r: NewRand(o.RandSeed, i), dist: dist, uniq: uniq, tid: i})
		if err != nil {
			return nil, err
		}
		stats[i] = newWorkerStats(warm)
		workers[i] = &worker{id: i, sh: sh, sess: sess, stats: stats[i], link: &netLink{}}
	}
	closeAll := func() {
		for _, w := range workers {
			w.c.close()
		}
	}
	if err := startWorkers(ctx, workers); err != nil {
		closeAll()
		return nil, err
	}

	col := newCollector(stats)
	start := time.Now()
	var feeder sync.WaitGroup
	if o.Rate > 0 {
		ch := make(chan arrival, backlogSize)
		sh.arrivals = ch
		p := newPacer(o.Rate, NewRand(o.RandSeed, -1))
		feeder.Add(1)
		go func() { defer feeder.Done(); feed(sh, p, start, ch, preciseSleep) }()
	}
	var wg sync.WaitGroup
	sh.running.Store(int32(len(workers)))
	for _, w := range workers {
		wg.Add(1)
		go func() { defer wg.Done(); w.loop() }()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	co := coordinator{
		o: &o, sh: sh, col: col, start: start, report: report, iv: newTally(),
		cut: func() int {
			quiet.cut.Store(true)
			return cutWorkers(workers)
		},
	}
	out := co.drive(ctx, allDone) // returns once every worker has ended
	sh.requestStop()
	feeder.Wait()
	end := time.Now()
	if !out.measureStart.IsZero() {
		// Arrivals dropped since the last interval's report (all of them
		// when there were no reports) belong to the measured window.
		d := sh.dropped.Load()
		co.droppedRun += d - co.droppedSeen
		co.droppedSeen = d
	}
	closeAll()
	col.collect(&co.iv)

	res := col.result(o)
	measureStart := out.measureStart
	if measureStart.IsZero() {
		measureStart = end // stopped during the warm-up: nothing measured
	}
	res.Elapsed = end.Sub(measureStart)
	if co.lastCheckpoint > 0 {
		// The statistics are those since the last checkpoint; sysbench's
		// total time stays the whole window's.
		res.TotalTime = res.Elapsed
		res.Elapsed = end.Sub(start.Add(co.lastCheckpoint))
	}
	res.Dropped = co.droppedRun
	delay := col.cum[phRun].dispatch
	res.ClientDelay = &delay
	if sh.arrivals != nil {
		res.Backlog, res.BacklogAges = backlogAtEnd(sh, o, start, end)
	}
	res.ForcedShutdown, res.Unfinished = out.forced, int64(out.unfinished)

	switch {
	case sh.fatal != nil:
		return res, sh.fatal
	case ctx.Err() != nil:
		return res, ctx.Err()
	}
	return res, nil
}

// backlogAtEnd counts the measured window's arrivals left unstarted when
// the run stopped (still queued, or taken by a worker as it stopped), with
// how long each had waited when the window ended (at end when the run had
// no time limit). Every worker has ended: nothing reads the queue.
func backlogAtEnd(sh *shared, o Options, start, end time.Time) (int64, []time.Duration) {
	windowEnd := end
	if o.Time > 0 {
		if w := start.Add(o.Warmup + o.Time); w.Before(end) {
			windowEnd = w
		}
	}
	var n int64
	var ages []time.Duration
	add := func(a arrival) {
		if a.phase != phRun {
			return
		}
		n++
		ages = append(ages, max(windowEnd.Sub(a.at), 0))
	}
	q := sh.arrivals
	for len(q) > 0 {
		add(<-q)
	}
	sh.leftMu.Lock()
	for _, a := range sh.left {
		add(a)
	}
	sh.leftMu.Unlock()
	return n, ages
}

// startWorkers connects and prepares every worker in parallel.
func startWorkers(ctx context.Context, workers []*worker) error {
	errs := make(chan error, len(workers))
	sem := make(chan struct{}, 16) // do not storm the server's accept queue
	for _, w := range workers {
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs <- w.start(ctx)
		}()
	}
	var first error
	for range workers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// coordinator owns the run's clock: interval ticks at exact multiples of
// the report interval, the switch from warm-up to the measured window, the
// end of the window, and the forced shutdown's cut when the grace after it
// runs out. It is the only goroutine that calls report, and it never waits
// on a worker: it reads the workers' tallies (a lock a worker holds only to
// record a finished event), so a server that stops answering still gets an
// interval per tick, with no events in it.
type coordinator struct {
	o      *Options
	sh     *shared
	col    *collector
	start  time.Time
	report func(Interval)
	iv     tally
	// cut closes the connections with a statement in flight and returns
	// how many there were (cutWorkers).
	cut func() int

	droppedSeen int64
	droppedRun  int64
	// lastCheckpoint is when the statistics were last reset by a
	// --report-checkpoints report (since the start of the clocks); zero
	// when none was.
	lastCheckpoint time.Duration
}

// outcome is how the coordinator saw the run end.
type outcome struct {
	measureStart time.Time // when the measured window began; zero if it never did
	forced       bool      // the grace ran out and the run was cut
	unfinished   int       // events in flight at the cut
}

// stopCause is why the window loop ended.
type stopCause int

const (
	stopWindowEnd stopCause = iota // the time limit
	stopCancelled                  // ctx
	stopFatal                      // a worker's fatal error
	stopAllDone                    // every worker ended by itself (event budget)
)

// drive runs the run's clock until every worker has ended: the window
// (ticks, warm-up switch, time limit), then the stop. It returns what run
// needs to build the result.
func (co *coordinator) drive(ctx context.Context, allDone <-chan struct{}) outcome {
	var out outcome
	cause, stopAt := co.window(ctx, allDone, &out.measureStart)
	if cause == stopAllDone {
		return out
	}
	co.sh.requestStop()
	deadline, ok := co.deadline(cause, stopAt)
	if !ok {
		<-allDone
		return out
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-allDone:
		return out
	case <-timer.C:
	}
	out.forced = true
	out.unfinished = co.cut()
	<-allDone // the cut workers end as their reads fail
	return out
}

// deadline is when the grace runs out for a stop of the given cause that
// began at stopAt (since the start of the clocks): Options.ForcedShutdown
// after the time limit, or after the cancellation when ctx came first. A
// fatal error keeps the time limit's deadline, as sysbench's alarm does.
// ok is false when the run waits for its workers however long they take.
func (co *coordinator) deadline(cause stopCause, stopAt time.Duration) (time.Time, bool) {
	o := co.o
	if o.ForcedShutdown <= 0 {
		return time.Time{}, false
	}
	limit := time.Duration(-1)
	if o.Time > 0 {
		limit = o.Warmup + o.Time
	}
	switch cause {
	case stopCancelled:
		if limit < 0 || stopAt < limit {
			limit = stopAt
		}
	case stopWindowEnd, stopFatal:
	default:
		return time.Time{}, false
	}
	if limit < 0 {
		return time.Time{}, false
	}
	return co.start.Add(limit + o.ForcedShutdown), true
}

// window runs until the window ends, the workers finish (event budget or a
// fatal error) or ctx is cancelled. It sets *measureStart when the
// measured window begins, and returns why it stopped and when (since the
// start of the clocks).
func (co *coordinator) window(ctx context.Context, allDone <-chan struct{}, measureStart *time.Time) (stopCause, time.Duration) {
	o := co.o
	ri := o.ReportInterval
	phase := phRun
	var (
		warmEnd = o.Warmup
		runEnd  time.Duration // 0 = no time limit
		base    time.Duration // where the current phase's ticks count from
		ivStart time.Duration
	)
	if o.Warmup > 0 {
		phase = phWarmup
	} else {
		*measureStart = co.start
	}
	if o.Time > 0 {
		runEnd = o.Warmup + o.Time
	}
	nextTick := base + ri
	// Checkpoints count from the start of the measured window, as
	// sysbench's count from the start of its threads (it has no warm-up).
	cps := o.ReportCheckpoints
	ci := 0
	for ci < len(cps) && cps[ci] <= 0 {
		ci++ // sysbench skips a checkpoint whose time has passed
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next, tick, switchPhase, end := time.Duration(-1), false, false, false
		consider := func(at time.Duration) {
			if next < 0 || at < next {
				next = at
			}
		}
		if ri > 0 {
			consider(nextTick)
		}
		if ci < len(cps) {
			consider(o.Warmup + cps[ci])
		}
		if phase == phWarmup {
			consider(warmEnd)
		} else if runEnd > 0 {
			consider(runEnd)
		}
		if next >= 0 {
			timer.Reset(time.Until(co.start.Add(next)))
		}
		var timerC <-chan time.Time
		if next >= 0 {
			timerC = timer.C
		}
		select {
		case <-ctx.Done():
			return stopCancelled, time.Since(co.start)
		case <-co.sh.fatalCh:
			return stopFatal, time.Since(co.start)
		case <-allDone:
			return stopAllDone, time.Since(co.start)
		case <-timerC:
		}
		tick = ri > 0 && next == nextTick
		switchPhase = phase == phWarmup && next == warmEnd
		end = phase == phRun && runEnd > 0 && next == runEnd
		if end {
			co.sh.requestStop()
		}
		if switchPhase {
			// New events belong to the measured window from now on; the
			// warm-up interval below still gets those that started before.
			co.sh.phase.Store(phRun)
		}
		if tick || switchPhase {
			co.emit(phase, ivStart, next)
			ivStart = next
		}
		if tick {
			nextTick += ri
		}
		if switchPhase {
			*measureStart = co.start.Add(warmEnd)
			phase = phRun
			base = warmEnd
			nextTick = base + ri
			// Everything recorded so far belongs to the warm-up.
			co.droppedRun = 0
		}
		if ci < len(cps) && next == o.Warmup+cps[ci] {
			co.checkpoint(time.Since(co.start))
			for ci < len(cps) && o.Warmup+cps[ci] <= next {
				ci++
			}
		}
		if end {
			return stopWindowEnd, runEnd
		}
	}
}

// checkpoint reports the statistics since the previous checkpoint (or the
// start of the measured window) at `at`, the clocks' reading now, and
// starts them afresh. What it takes from the workers also stays in the
// current interval.
func (co *coordinator) checkpoint(at time.Duration) {
	co.col.drain(&co.iv, phRun)
	res := co.col.checkpoint(*co.o)
	from := max(co.lastCheckpoint, co.o.Warmup)
	res.Elapsed = at - from
	res.TotalTime = at - co.o.Warmup
	co.lastCheckpoint = at
	if co.report != nil {
		co.report(Interval{Interval: engine.Interval{Phase: engine.PhaseCheckpoint, Start: from, End: at}, Checkpoint: res})
	}
}

// emit collects the interval [from, to) and reports it.
func (co *coordinator) emit(phase int, from, to time.Duration) {
	// The interval holds what the workers recorded since the last tick,
	// and what a checkpoint took from them since (checkpoint); it starts
	// empty again after the report.
	co.col.drain(&co.iv, phase)
	defer func() {
		co.iv.clearCounts()
		co.iv.Hist.Reset()
	}()
	d := co.sh.dropped.Load()
	dropped := d - co.droppedSeen
	co.droppedSeen = d
	if phase == phRun {
		co.droppedRun += dropped
	}
	if co.report == nil || co.o.ReportInterval <= 0 {
		return
	}
	iv := Interval{Interval: co.iv.Interval(co.o.Percentile)}
	iv.Phase, iv.Start, iv.End, iv.Threads = engine.PhaseRun, from, to, int(co.sh.running.Load())
	iv.Late, iv.Dropped = co.iv.late, dropped
	if phase == phWarmup {
		iv.Phase = engine.PhaseWarmup
	}
	if co.sh.arrivals != nil {
		iv.Queue = int64(len(co.sh.arrivals))
	}
	co.report(iv)
}
