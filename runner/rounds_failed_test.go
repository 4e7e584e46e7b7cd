package runner

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/oltp"
	"benchmatrix/record"
)

// failFirst fails its first run and then reports as levelWorkload does.
type failFirst struct {
	levelWorkload
	calls atomic.Int32
}

func (w *failFirst) Run(ctx context.Context, cfg *mysql.Config, eo engine.Options, report func(engine.Interval)) (*engine.Result, error) {
	if w.calls.Add(1) == 1 {
		return nil, errors.New("the first cell fails")
	}
	return w.levelWorkload.Run(ctx, cfg, eo, report)
}

// A cell that fails in the first of the minimum rounds fails the run at
// its end, not the rounds after it: rounds 2 and 3 still run (they were
// skipped once, when the minimum rounds started to run one at a time, and
// the run jumped to round 4), and the progress line names the comparison
// with no pair yet instead of a NaN ratio.
func TestRoundsAfterAFailedCell(t *testing.T) {
	t.Parallel()
	rig := newFakeRig()
	rig.cfg.Workload = &failFirst{levelWorkload: levelWorkload{rng: rand.New(rand.NewPCG(9, 1)), noise: 0.05,
		level: func(o oltp.Options) float64 { return 1000 * float64(o.Threads) }}}
	var log strings.Builder
	rig.cfg.Log = &log
	run, err := runRoundsFake(t, rig, roundsHead+twoScenarios, experiment.Flags{})
	if !errors.Is(err, ErrCellsFailed) {
		t.Fatalf("run: %v, want the failed cell's error", err)
	}
	seen := map[int]int{}
	for _, c := range run.Cells {
		seen[c.Repeat]++
	}
	for k := 1; k <= 3; k++ {
		if seen[k] != 2 {
			t.Errorf("round %d ran %d cells, want 2 (rounds run %v)", k, seen[k], seen)
		}
	}
	if run.Rounds == nil || run.Rounds.Rounds < 3 || run.Cells[0].Status == record.CellOK {
		t.Errorf("rounds %+v, first cell %s", run.Rounds, run.Cells[0].Status)
	}
	if s := log.String(); strings.Contains(s, "NaN") || !strings.Contains(s, "b vs a: no round measured both yet") {
		t.Errorf("progress:\n%s", s)
	}
}
