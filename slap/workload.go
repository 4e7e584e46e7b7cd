package slap

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/go-sql-driver/mysql"

	"benchmatrix/engine"
	"benchmatrix/oltp"
)

// Workload runs a slap configuration as one cell of a matrix: one engine,
// one concurrency, its iterations to the end. Each query is an event
// (queries/s is what mysqlslap's seconds invert); the statistics cover the
// timed load phases only, the part mariadb-slap's seconds measure, and the
// per-second intervals cover the seconds in which a load phase ran. It is
// the slap engine behind engine.Workload (descriptor.go).
type Workload struct{}

// clientStats is one client's tally. Its mutex is only ever contended by
// the once-a-second interval tick, not by other clients.
type clientStats struct {
	mu                            sync.Mutex
	events, reads, writes, others int64    // since the last interval
	total                         [4]int64 // the run's: events, reads, writes, others
	sumNS, minNS, maxNS           int64
	cur, all                      *hdrhistogram.Histogram
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 100*1000*1000, 3) }

func (s *clientStats) record(kind Kind, d time.Duration) {
	ns := d.Nanoseconds()
	us := max(1, min((ns+500)/1000, 100*1000*1000))
	s.mu.Lock()
	s.events++
	s.total[0]++
	switch {
	case kind.IsRead():
		s.reads++
		s.total[1]++
	case kind.IsWrite():
		s.writes++
		s.total[2]++
	default:
		s.others++
		s.total[3]++
	}
	s.sumNS += ns
	if s.minNS == 0 || ns < s.minNS {
		s.minNS = ns
	}
	s.maxNS = max(s.maxNS, ns)
	_ = s.cur.RecordValue(us)
	_ = s.all.RecordValue(us)
	s.mu.Unlock()
}

func pct(h *hdrhistogram.Histogram, p float64) float64 {
	if h.TotalCount() == 0 {
		return 0
	}
	return float64(h.ValueAtQuantile(p)) / 1000
}

// schemaExists asks whether a schema is there (before a cell, to refuse
// dropping one benchmatrix did not create).
func schemaExists(ctx context.Context, s Session, name string) (bool, error) {
	// SHOW, not SELECT: the run's Com_select stays mysqlslap's own.
	like := strings.NewReplacer(`\`, `\\`, `'`, `\'`, `%`, `\%`, `_`, `\_`).Replace(name)
	got, err := s.Column(ctx, "SHOW DATABASES LIKE '"+like+"'")
	for _, g := range got {
		if g == name {
			return true, err
		}
	}
	return false, err
}

// run runs the cell and reports an interval for every second in which a
// load phase ran. o gives the clients (Threads), the bound (Time, plus
// ForcedShutdown as grace), the report interval and the configuration.
func run(ctx context.Context, cfg *mysql.Config, o Options, report func(engine.Interval)) (_ *engine.Result, err error) {
	c := o.Config
	c.Concurrency = []int{max(1, o.Threads)}
	c.Silent, c.OnlyPrint, c.CSV, c.Verbose = true, false, "", 0
	ep := cfg.Clone()
	ep.DBName = ""
	dial := DriverDialer{Config: ep, Blocking: canBlock(c.Concurrency[0])}

	// mysqlslap drops and creates its schema: never one benchmatrix did not create.
	check, err := dial.Main(ctx)
	if err != nil {
		return nil, err
	}
	exists, err := schemaExists(ctx, check, c.CreateSchema)
	check.Close()
	if err != nil {
		return nil, err
	}
	if exists {
		return nil, fmt.Errorf("schema %s exists already; slap drops and recreates it each iteration, so it will not run next to a schema "+
			"benchmatrix did not create (drop it, or give the workload another create_schema)", c.CreateSchema)
	}
	defer func() {
		// A run that failed or was cut may leave its schema: drop it.
		if err == nil {
			return
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if s, err := dial.Main(dctx); err == nil {
			_ = s.Run(dctx, "DROP SCHEMA IF EXISTS `"+c.CreateSchema+"`")
			s.Close()
		}
	}()

	limit := o.Time
	if limit > 0 {
		limit += o.ForcedShutdown
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	clients := make([]*clientStats, c.Concurrency[0])
	for i := range clients {
		clients[i] = &clientStats{cur: newHist(), all: newHist()}
	}
	// The load time within the current interval: an interval's length is
	// the time a load phase ran in it (it ends at its tick), so that its
	// rate is per second of load, as the cell's result is.
	var (
		mu        sync.Mutex
		loading   bool
		loadStart time.Time // of the running phase, or of the interval if later
		loadTime  time.Duration
		sawLoad   bool
	)
	b := &Bench{Config: c, Dial: dial, Out: discard{}, Err: discard{},
		OnQuery: func(client int, kind Kind, d time.Duration) { clients[client].record(kind, d) },
		OnLoad: func(start bool) {
			mu.Lock()
			defer mu.Unlock()
			now := time.Now()
			if start {
				loading, loadStart, sawLoad = true, now, true
			} else if loading {
				loading = false
				loadTime += now.Sub(loadStart)
			}
		}}
	begin := time.Now()
	tickEvery := o.ReportInterval
	if tickEvery <= 0 {
		tickEvery = time.Second
	}
	emit := func(to time.Time) {
		mu.Lock()
		if loading {
			loadTime += to.Sub(loadStart)
			loadStart = to
		}
		seen, length := sawLoad, loadTime
		sawLoad, loadTime = loading, 0
		mu.Unlock()
		if !seen || length <= 0 {
			return
		}
		merged := newHist()
		iv := engine.Interval{Phase: engine.PhaseRun, Start: to.Sub(begin) - length, End: to.Sub(begin), Threads: len(clients)}
		for _, cs := range clients {
			cs.mu.Lock()
			iv.Events += cs.events
			iv.Reads += cs.reads
			iv.Writes += cs.writes
			iv.Others += cs.others
			cs.events, cs.reads, cs.writes, cs.others = 0, 0, 0, 0
			merged.Merge(cs.cur)
			cs.cur.Reset()
			cs.mu.Unlock()
		}
		iv.LatP50, iv.LatP95, iv.LatP99 = pct(merged, 50), pct(merged, 95), pct(merged, 99)
		iv.LatMax, iv.LatPct = float64(merged.Max())/1000, pct(merged, Percentile)
		if merged.TotalCount() == 0 {
			iv.LatMax = 0
		}
		if report != nil {
			report(iv)
		}
	}
	done := make(chan struct{})
	var tickWG sync.WaitGroup
	tickWG.Add(1)
	go func() {
		defer tickWG.Done()
		t := time.NewTicker(tickEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				emit(time.Now())
				return
			case now := <-t.C:
				emit(now)
			}
		}
	}()
	cons, runErr := b.Run(ctx)
	close(done)
	tickWG.Wait()
	if runErr != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("slap did not finish its %d iteration(s) within the cell's bound of %s (duration plus grace): "+
				"mysqlslap runs a fixed number of queries, so give the experiment a longer duration", c.Iterations, limit)
		}
		return nil, runErr
	}
	res := &engine.Result{}
	all := newHist()
	var sum, minNS, maxNS int64
	perClient := make([]float64, len(clients))
	for i, cs := range clients {
		cs.mu.Lock()
		all.Merge(cs.all)
		sum += cs.sumNS
		if cs.minNS > 0 && (minNS == 0 || cs.minNS < minNS) {
			minNS = cs.minNS
		}
		maxNS = max(maxNS, cs.maxNS)
		perClient[i] = float64(cs.total[0])
		res.Events += cs.total[0]
		res.Reads += cs.total[1]
		res.Writes += cs.total[2]
		res.Others += cs.total[3]
		cs.mu.Unlock()
	}
	for _, con := range cons {
		for _, d := range con.Iterations {
			res.Elapsed += d
		}
	}
	res.Latency = engine.Latency{Min: float64(minNS) / 1e6, Max: float64(maxNS) / 1e6, Sum: float64(sum) / 1e6,
		P50: pct(all, 50), P95: pct(all, 95), P99: pct(all, 99), P999: pct(all, 99.9), Pct: pct(all, Percentile)}
	if res.Events > 0 {
		res.Latency.Avg = res.Latency.Sum / float64(res.Events)
	}
	mean, sd := oltp.MeanStddev(perClient)
	res.Fairness = engine.Fairness{EventsAvg: mean, EventsStddev: sd, TimeAvg: res.Elapsed.Seconds()}
	return res, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
