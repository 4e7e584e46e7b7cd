package oltp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// lateThreshold: an open-loop event is late when it starts more than this
// after its scheduled arrival.
const lateThreshold = time.Millisecond

// checkRun validates o for a run.
func checkRun(o *Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.ReinsertID == "auto" && !o.AutoInc {
		switch o.Workload {
		case "oltp_read_write", "oltp_write_only", "oltp_legacy":
			return fmt.Errorf("reinsert_id=auto needs auto_inc=on: without AUTO_INCREMENT the re-INSERT without an id cannot get one")
		}
	}
	if o.TableSize < 1 {
		switch o.Workload {
		case "oltp_insert", "bulk_insert":
		default:
			return fmt.Errorf("%s needs table_size >= 1", o.Workload)
		}
	}
	return nil
}

func run(ctx context.Context, cfg *mysql.Config, o Options, report func(Interval)) (*Result, error) {
	if err := checkRun(&o); err != nil {
		return nil, err
	}
	dist, err := NewDist(o)
	if err != nil {
		return nil, err
	}
	o.RandSeed = effectiveSeed(o)
	blocking := useBlocking(cfg, o.Threads)
	cn, err := newConnector(cfg, blocking)
	if err != nil {
		return nil, err
	}
	if blocking {
		defer reserveProcs(o.Threads)()
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
		workers[i] = &worker{id: i, sh: sh, sess: sess, stats: stats[i]}
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
		go func() { defer feeder.Done(); feed(sh, p, start, ch) }()
	}
	var wg sync.WaitGroup
	sh.running.Store(int32(len(workers)))
	for _, w := range workers {
		wg.Add(1)
		go func() { defer wg.Done(); w.loop() }()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	co := coordinator{o: &o, sh: sh, col: col, start: start, report: report, iv: newTally()}
	measureStart := co.drive(ctx, allDone)
	sh.requestStop()
	<-allDone
	feeder.Wait()
	end := time.Now()
	closeAll()
	col.collect(&co.iv)

	res := &Result{Options: o}
	if measureStart.IsZero() {
		measureStart = end // stopped during the warm-up: nothing measured
	}
	res.Elapsed = end.Sub(measureStart)
	t := &col.cum[phRun]
	res.Events, res.Reads, res.Writes, res.Others = t.events, t.reads, t.writes, t.others
	res.Errors, res.Reconnects, res.Late = t.errors, t.reconnects, t.late
	res.Dropped = co.droppedRun
	res.Latency = t.latency(o.Percentile)
	res.Fairness = col.fairness()
	res.Histogram = histogramBars(t.hist)

	switch {
	case sh.fatal != nil:
		return res, sh.fatal
	case ctx.Err() != nil:
		return res, ctx.Err()
	}
	return res, nil
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
// the report interval, the switch from warm-up to the measured window, and
// the end of the window. It is the only goroutine that calls report.
type coordinator struct {
	o      *Options
	sh     *shared
	col    *collector
	start  time.Time
	report func(Interval)
	iv     tally

	droppedSeen int64
	droppedRun  int64
}

// drive runs until the window ends, the workers finish (event budget or a
// fatal error) or ctx is cancelled, and returns when the measured window
// began.
func (co *coordinator) drive(ctx context.Context, allDone <-chan struct{}) (measureStart time.Time) {
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
		measureStart = co.start
	}
	if o.Time > 0 {
		runEnd = o.Warmup + o.Time
	}
	nextTick := base + ri
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
			return measureStart
		case <-co.sh.fatalCh:
			return measureStart
		case <-allDone:
			return measureStart
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
			measureStart = co.start.Add(warmEnd)
			phase = phRun
			base = warmEnd
			nextTick = base + ri
			// Everything recorded so far belongs to the warm-up.
			co.droppedRun = 0
		}
		if end {
			return measureStart
		}
	}
}

// emit collects the interval [from, to) and reports it.
func (co *coordinator) emit(phase int, from, to time.Duration) {
	co.col.collectPhases(&co.iv, phase)
	d := co.sh.dropped.Load()
	dropped := d - co.droppedSeen
	co.droppedSeen = d
	if phase == phRun {
		co.droppedRun += dropped
	}
	if co.report == nil || co.o.ReportInterval <= 0 {
		return
	}
	t := &co.iv
	iv := Interval{
		Phase: PhaseRun, Start: from, End: to, Threads: int(co.sh.running.Load()),
		Events: t.events, Reads: t.reads, Writes: t.writes, Others: t.others,
		Errors: t.errors, Reconnects: t.reconnects,
		Late: t.late, Dropped: dropped,
	}
	if phase == phWarmup {
		iv.Phase = PhaseWarmup
	}
	if t.events > 0 {
		iv.LatP50 = pctMS(t.hist, 50)
		iv.LatP95 = pctMS(t.hist, 95)
		iv.LatP99 = pctMS(t.hist, 99)
		iv.LatMax = nsToMS(t.latMax)
		iv.LatPct = pctMS(t.hist, co.o.Percentile)
	}
	if co.sh.arrivals != nil {
		iv.Queue = int64(len(co.sh.arrivals))
	}
	co.report(iv)
}
