package runner

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/analysis"
	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/results"
	"benchmatrix/tpcc"
)

// nopmWorkload is a fake tpcc engine whose tps says nothing (the same for
// every cell, with 20 % noise) while its NOPM is 600 per thread (1 %
// noise): a conclusive run of two tpcc scenarios must stop on NOPM.
type nopmWorkload struct {
	fakeWorkload
	mu  sync.Mutex
	rng *rand.Rand
}

func (w *nopmWorkload) Run(ctx context.Context, _ *mysql.Config, eo engine.Options, report func(engine.Interval)) (*engine.Result, error) {
	o := eo.(tpcc.Options)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w.mu.Lock()
	ftps, fnopm := math.Exp(0.2*w.rng.NormFloat64()), math.Exp(0.01*w.rng.NormFloat64())
	w.mu.Unlock()
	ev := int64(1000 * ftps * o.Time.Seconds())
	nopm := 600 * float64(o.Threads) * fnopm
	report(engine.Interval{Phase: engine.PhaseRun, End: o.Time, Threads: o.Threads, Events: ev, Writes: ev,
		Metrics: map[string]float64{"nopm": nopm}})
	return &engine.Result{Elapsed: o.Time, Events: ev, Writes: ev, Metrics: map[string]float64{"nopm": nopm, "tpm": 2.3 * nopm}}, nil
}

// The runner records each result's headline and adds rounds until the
// comparison is decided on it: NOPM for tpcc cells, as the Conclusion
// states it.
func TestRoundsStopOnTheHeadline(t *testing.T) {
	t.Parallel()
	rig := newFakeRig()
	rig.cfg.Workload = &nopmWorkload{rng: rand.New(rand.NewPCG(7, 1))}
	run, err := runRoundsFake(t, rig, roundsHead+"[workload]\nname = \"tpcc\"\n[scenarios]\na = { threads = 1 }\nb = { threads = 2 }\n", experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range run.Cells {
		if c.Result == nil || c.Result.Headline == nil || c.Result.Headline.Name != "nopm" {
			t.Fatalf("cell %s/%d: result %+v, no nopm headline recorded", c.Name, c.Repeat, c.Result)
		}
	}
	rec := run.Rounds
	// b makes 2x a's NOPM in every round with 1 % noise: decided from the
	// size at the first look (tps, with 20 % noise, could not be).
	if rec == nil || rec.Stopped != analysis.StoppedDecided || rec.Rounds != 3 {
		t.Fatalf("rounds %+v", rec)
	}
	d := rec.Decisions
	if len(d) != 1 || d[0].Figure != "nopm" || d[0].Outcome != analysis.OutcomeFaster || d[0].Ratio < 1.9 || d[0].Ratio > 2.1 {
		t.Fatalf("decisions %+v", d)
	}
	var sum strings.Builder
	results.WriteConclusion(&sum, run)
	if !strings.Contains(sum.String(), "**Conclusive after 3 rounds") || !strings.Contains(sum.String(), "- b vs a: **2.00x** NOPM, higher, significant") {
		t.Errorf("conclusion:\n%s", sum.String())
	}
}
