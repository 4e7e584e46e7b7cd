package runner

import (
	"context"
	"fmt"
	"io"
	"slices"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/capacity"
	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/observe"
	"benchmatrix/oltp"
	"benchmatrix/record"
)

// Capacity at a latency target (issue 30). A cell with an SLO and no rate
// of its own searches, after its drain and before its warm-up, the highest
// open-loop rate that meets the target (capacity.Search: short steps, each
// a run of the engine at one rate with a 1 s warm-up of its own); its
// measured run is then the confirmation, at the rate found and full length,
// judged by the capacity hook's collect like a step. A cell with its own
// rate is only judged.

// dupKey is MySQL's duplicate-key error (ER_DUP_ENTRY).
const dupKey = 1062

// stepWarmup is each step's warm-up: the connections settle and the queue
// reaches its level before the step's window counts.
const stepWarmup = time.Second

// searchDeadline bounds the capacity search phase: every step at its
// longest, with its warm-up, connections and grace.
func (r *Runner) searchDeadline(c *experiment.Cell) time.Duration {
	if !c.Searches() {
		return fixedDeadline
	}
	cm := c.Workload.Common()
	cfg := c.Policy.SLO.Config(cm.Time)
	per := max(cfg.StepMax, cfg.Confirm) + stepWarmup + time.Duration(max(cm.Threads, 1))*connectPerThread + r.cfg.Grace + measureMargin
	d := time.Duration(cfg.MaxSteps) * per
	if c.Workload.Data().Changes {
		d += r.deadline(c, PhaseLoad) // the reload after the steps
	}
	return d
}

// clientUsage is the client's CPU time and run delay at one moment.
type clientUsage struct {
	at       time.Time
	cpu      time.Duration
	delay    time.Duration
	delayOK  bool
	cpuKnown bool
}

func readClientUsage() clientUsage {
	u := clientUsage{at: time.Now()}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		u.cpuKnown = true
	}
	u.delay, u.delayOK = observe.SelfRunDelay()
	return u
}

// since fills the step's client evidence: CPU and run delay between u and
// now, % of one CPU.
func (u clientUsage) since(st *capacity.Step) {
	now := readClientUsage()
	wall := now.at.Sub(u.at).Seconds()
	if wall <= 0 {
		return
	}
	if u.cpuKnown && now.cpuKnown {
		st.ClientCPUPct = 100 * (now.cpu - u.cpu).Seconds() / wall
	}
	if u.delayOK && now.delayOK {
		st.ClientRunDelayPct = 100 * (now.delay - u.delay).Seconds() / wall
	}
}

// stepOf is what an engine run measured, as a step of the search (not yet
// judged): every arrival of its window, served, queued or dropped, and the
// latency the target names.
func stepOf(slo capacity.SLO, rate float64, res *engine.Result) capacity.Step {
	st := capacity.Step{Rate: rate, Seconds: res.Elapsed.Seconds(), Events: res.Events, Errors: res.Errors,
		Backlog: res.Backlog, Dropped: res.Dropped, Late: res.Late,
		P50: res.Latency.P50, P99: res.Latency.P99, Achieved: res.TPS()}
	limitMS := float64(slo.Limit) / float64(time.Millisecond)
	var total float64
	for _, b := range res.Histogram {
		total += b[1]
	}
	// The histogram's bars: (upper bound ms, count). A bar reaching the
	// limit counts as past it (at most 0.1 % of the limit too soon: the
	// histogram keeps 3 significant digits).
	var seen float64
	rank := slo.Percentile / 100 * total
	for _, b := range res.Histogram {
		if b[0] >= limitMS {
			st.Over += int64(b[1])
		}
		if seen < rank && seen+b[1] >= rank {
			st.Pct = b[0]
		}
		seen += b[1]
	}
	for _, a := range res.BacklogAges {
		if a >= slo.Limit {
			st.BacklogOver++
		}
	}
	if res.ClientDelay != nil {
		st.ClientOver = res.ClientDelay.AtLeast(slo.Limit)
	}
	return st
}

// stepProber runs the search's steps on the workload: each an engine run
// of o at one rate, with its own warm-up and random seed, its window the
// step's length. log hears each step's verdict.
func stepProber(w engine.Workload, cfg *mysql.Config, o engine.Spec, slo capacity.SLO, log io.Writer) capacity.Prober {
	steps := 0
	return func(ctx context.Context, rate float64, win time.Duration) (capacity.Step, error) {
		steps++
		so := o.With(func(c *engine.Common) {
			c.Rate, c.Time, c.Warmup, c.Events = rate, win, stepWarmup, 0
			c.ReportInterval = 0
			// Each step draws its own ids (an insert load's would collide
			// with the rows the steps before wrote), reproducibly.
			c.Seed = stepSeed(o.Common().Seed, steps)
		})
		if oo, ok := so.Options.(oltp.Options); ok && so.Data().Changes && !slices.Contains(oo.IgnoreErrors, dupKey) {
			// Another seed's random ids may meet a row an earlier step
			// inserted (about one insert in 10,000 once 400,000 rows are
			// in): the event is retried with a new id and counted as an
			// error, as --mysql-ignore-errors=1062 does.
			oo.IgnoreErrors = append(slices.Clone(oo.IgnoreErrors), dupKey)
			so.Options = oo
		}
		u := readClientUsage()
		got, err := w.Run(ctx, cfg, so.Options, func(engine.Interval) {})
		if err != nil {
			return capacity.Step{}, err
		}
		st := stepOf(slo, rate, got)
		u.since(&st)
		cp := st
		capacity.Judge(slo, &cp)
		fmt.Fprintf(log, "      %s/s for %s: %s: %s\n", capacity.FmtRate(rate), win, cp.Verdict, cp.Why)
		return st, nil
	}
}

// searchCapacity is the capacity search phase: it runs the search and
// returns the options of the cell's measured run, at the rate found (the
// lowest rate tried when none met the target). The search is recorded on
// the cell whatever happens.
func (cr *cellRun) searchCapacity(cfg *mysql.Config, w engine.Workload, o engine.Spec) (engine.Spec, error) {
	r, c, res := cr.r, cr.c, cr.res
	spec := c.Policy.SLO
	rec := &record.CellCapacity{SLO: spec.Target, Searched: true}
	res.Capacity = rec
	scfg := spec.Config(o.Common().Time)
	var out capacity.Outcome
	err := cr.in(PhaseSearch, func(ctx context.Context) error {
		r.cfg.Progress.Phase("capacity search")
		fmt.Fprintf(r.log, "    capacity search at %s\n", spec.Target)
		start := time.Now()
		probe := stepProber(w, cfg, o, spec.Target, r.log)
		var err error
		out, err = capacity.Search(ctx, scfg, probe)
		rec.SearchSeconds = time.Since(start).Seconds()
		if err != nil || !o.Data().Changes {
			return err
		}
		// The steps wrote: the run at the capacity starts from the data the
		// cell would have had without a search (its ids could also meet the
		// steps' rows).
		fmt.Fprintf(r.log, "    the steps changed the data: loading it again for the run at the capacity\n")
		r.loaded = ""
		if err := r.ensureData(ctx, cr, o); err != nil {
			return fmt.Errorf("reload after the search: %w", err)
		}
		if res.Data == "restored" || res.Data == "cached" {
			// A restore restarts the server: its globals are set again
			// (its limits hold over restarts: server.Limiter).
			return r.configure(ctx, c, res)
		}
		return nil
	})
	rec.Search = &out
	if err != nil {
		return o, fmt.Errorf("capacity search: %w", err)
	}
	rate := out.Capacity
	switch out.Status {
	case capacity.Below:
		rate = out.High // the lowest rate tried: the cell measures how far off it is
		fmt.Fprintf(r.log, "    %s: %s/s missed it\n", capacity.Below, capacity.FmtRate(out.High))
	default:
		missed := "the lowest rate that missed: " + capacity.FmtRate(out.High) + "/s"
		if out.High == 0 { // the budget or slo_max ended the doubling
			missed = "no rate tried missed it"
		}
		fmt.Fprintf(r.log, "    capacity %s/s (%s; %s); measuring it at full length\n", capacity.FmtRate(out.Capacity), out.Status, missed)
	}
	for _, n := range out.Notes {
		res.ObserveNotes = append(res.ObserveNotes, "capacity search: "+n)
	}
	o = o.With(func(c *engine.Common) { c.Rate = rate })
	rec.Rate = rate
	return o, nil
}

// stepSeed is step k's random seed, derived from the cell's: distinct per
// step, positive and below 2^53 like the runner's own seeds.
func stepSeed(seed int64, k int) int64 {
	x := uint64(seed) ^ uint64(k)*0x9e3779b97f4a7c15
	x ^= x >> 29
	return int64(x&(1<<53-1) | 1)
}

// capacityHook judges the cell's measured run against its target: the
// confirmation of a searched capacity, or a cell's own rate.
type capacityHook struct {
	usage clientUsage
}

func (*capacityHook) feature() string { return "capacity" }

func (h *capacityHook) beforeRun(_ context.Context, _ *cellRun, _ engine.Common) {
	h.usage = readClientUsage()
}

func (h *capacityHook) collect(_ context.Context, cr *cellRun) error {
	c, res := cr.c, cr.res
	if c.Policy.SLO == nil || res.Result == nil {
		return nil
	}
	rec := res.Capacity
	if rec == nil {
		rec = &record.CellCapacity{SLO: c.Policy.SLO.Target, Rate: c.Workload.Common().Rate}
		res.Capacity = rec
	}
	st := stepOf(rec.SLO, rec.Rate, res.Result)
	h.usage.since(&st)
	capacity.Judge(rec.SLO, &st)
	rec.Run = &st
	fmt.Fprintf(cr.r.log, "    at %s/s for %s: %s: %s\n", capacity.FmtRate(rec.Rate), res.Result.Elapsed.Round(time.Millisecond), st.Verdict, st.Why)
	return nil
}
