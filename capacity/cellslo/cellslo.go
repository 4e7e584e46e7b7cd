// Package cellslo is capacity at a latency target (issue 30) in a cell's
// lifecycle. A cell with an SLO and no rate of its own searches, after its
// drain and before its warm-up, the highest open-loop rate that meets the
// target (capacity.Search: short steps, each a run of the engine at one
// rate with a 1 s warm-up of its own); its measured run is then the
// confirmation, at the rate found and full length, judged in collect like
// a step. A cell with its own rate is only judged.
package cellslo

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
	"benchmatrix/lifecycle"
	"benchmatrix/observe"
	"benchmatrix/oltp"
	"benchmatrix/record"
)

// dupKey is MySQL's duplicate-key error (ER_DUP_ENTRY).
const dupKey = 1062

// StepWarmup is each step's warm-up: the connections settle and the queue
// reaches its level before the step's window counts.
const StepWarmup = time.Second

// Hook is capacity in one cell: the search phase, and the judgement of the
// measured run against the cell's target.
type Hook struct {
	usage clientUsage
}

// New is a cell's hook.
func New() lifecycle.Hook { return &Hook{} }

// Feature implements lifecycle.Hook.
func (*Hook) Feature() string { return "capacity" }

// Steps bounds the search: every step at its longest, with its warm-up.
func (*Hook) Steps(c *experiment.Cell) (int, time.Duration) {
	cfg := c.Policy.SLO.Config(c.Workload.Common().Time)
	return cfg.MaxSteps, max(cfg.StepMax, cfg.Confirm) + StepWarmup
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
// judged): every arrival of its window, served, queued or dropped, the
// latency the target names, and how many of its seconds (ivs, the run's
// per-second intervals) had an event at or past the limit.
func stepOf(slo capacity.SLO, rate float64, res *engine.Result, ivs []engine.Interval) capacity.Step {
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
	for _, iv := range ivs {
		if iv.Phase == engine.PhaseRun && iv.LatMax >= limitMS {
			st.SlowSeconds++
		}
	}
	return st
}

// StepProber runs the search's steps on the workload: each an engine run
// of o at one rate, with its own warm-up and random seed, its window the
// step's length. log hears each step's verdict.
func StepProber(w engine.Workload, cfg *mysql.Config, o engine.Spec, slo capacity.SLO, log io.Writer) capacity.Prober {
	steps := 0
	return func(ctx context.Context, rate float64, win time.Duration) (capacity.Step, error) {
		steps++
		so := o.With(func(c *engine.Common) {
			c.Rate, c.Time, c.Warmup, c.Events = rate, win, StepWarmup, 0
			// Per-second intervals tell a stall the queue drained from an
			// overload (capacity.Stalled).
			c.ReportInterval = time.Second
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
		var ivs []engine.Interval
		got, err := w.Run(ctx, cfg, so.Options, func(iv engine.Interval) { ivs = append(ivs, iv) })
		if err != nil {
			return capacity.Step{}, err
		}
		st := stepOf(slo, rate, got, ivs)
		u.since(&st)
		cp := st
		capacity.Judge(slo, &cp)
		fmt.Fprintf(log, "      %s/s for %s: %s: %s\n", capacity.FmtRate(rate), win, cp.Verdict, cp.Why)
		return st, nil
	}
}

// Search is the capacity search phase: it runs the search and returns the
// options of the cell's measured run, at the rate found (the lowest rate
// tried when none met the target). The search is recorded on the cell
// whatever happens.
func (*Hook) Search(ctx context.Context, cell lifecycle.Cell, cfg *mysql.Config, w engine.Workload, o engine.Spec) (engine.Spec, error) {
	c, res, log := cell.Planned(), cell.Record(), cell.Log()
	spec := c.Policy.SLO
	rec := &record.CellCapacity{SLO: spec.Target, Searched: true}
	res.Capacity = rec
	scfg := spec.Config(o.Common().Time)
	cell.Progress("capacity search")
	fmt.Fprintf(log, "    capacity search at %s\n", spec.Target)
	start := time.Now()
	out, err := capacity.Search(ctx, scfg, StepProber(w, cfg, o, spec.Target, log))
	rec.SearchSeconds = time.Since(start).Seconds()
	rec.Search = &out
	if err == nil && o.Data().Changes {
		// The steps wrote: the run at the capacity starts from the data the
		// cell would have had without a search (its ids could also meet the
		// steps' rows).
		fmt.Fprintf(log, "    the steps changed the data: loading it again for the run at the capacity\n")
		if err = cell.Reload(ctx, o); err != nil {
			err = fmt.Errorf("reload after the search: %w", err)
		}
	}
	if err != nil {
		return o, err
	}
	rate := out.Capacity
	switch out.Status {
	case capacity.Below:
		rate = out.High // the lowest rate tried: the cell measures how far off it is
		fmt.Fprintf(log, "    %s: %s/s missed it\n", capacity.Below, capacity.FmtRate(out.High))
	default:
		missed := "the lowest rate that missed: " + capacity.FmtRate(out.High) + "/s"
		if out.High == 0 { // the budget or slo_max ended the doubling
			missed = "no rate tried missed it"
		}
		fmt.Fprintf(log, "    capacity %s/s (%s; %s); measuring it at full length\n", capacity.FmtRate(out.Capacity), out.Status, missed)
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

// BeforeRun notes the client's usage at the measured run's start.
func (h *Hook) BeforeRun(_ context.Context, _ lifecycle.Cell, _ engine.Common) {
	h.usage = readClientUsage()
}

// Collect judges the cell's measured run against its target: the
// confirmation of a searched capacity, or a cell's own rate.
func (h *Hook) Collect(_ context.Context, cell lifecycle.Cell) error {
	c, res := cell.Planned(), cell.Record()
	if c.Policy.SLO == nil || res.Result == nil {
		return nil
	}
	rec := res.Capacity
	if rec == nil {
		rec = &record.CellCapacity{SLO: c.Policy.SLO.Target, Rate: c.Workload.Common().Rate}
		res.Capacity = rec
	}
	st := stepOf(rec.SLO, rec.Rate, res.Result, res.Intervals)
	h.usage.since(&st)
	capacity.Judge(rec.SLO, &st)
	rec.Run = &st
	fmt.Fprintf(cell.Log(), "    at %s/s for %s: %s: %s\n", capacity.FmtRate(rec.Rate), res.Result.Elapsed.Round(time.Millisecond), st.Verdict, st.Why)
	return nil
}
