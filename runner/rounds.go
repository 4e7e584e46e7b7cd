package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/sequential"
)

// until = "conclusive" (issue 26): the plan holds the minimum rounds; after
// they ran, the runner asks the decision (analysis.DecideRounds) after every
// round and adds a paired round (every cell once, in the plan's order:
// experiment.Plan.WithRounds) until every comparison is decided, or
// max_repeats rounds ran, or the next round, at the rounds' average time so
// far, would end past the budget. run.json's "rounds" records the rounds,
// their time, why the run stopped and every decision. A shard runs its
// minimum rounds only: rounds are added as the answers come in, which
// shards running apart cannot do; merge decides over the rounds they ran.

// runRounds runs the cell runs todo and, for a conclusive plan, the
// rounds it adds. The minimum rounds run one round at a time, with the
// decision so far printed after each; duration = "auto" chooses the cells'
// length after the first.
func (r *Runner) runRounds(ctx context.Context, run *record.Run, w Sink, todo []int) error {
	spec, ok := analysis.RoundsSpecOf(r.m)
	if !ok {
		return r.runCells(ctx, run, w, todo)
	}
	var err error
	for len(todo) > 0 {
		round := r.plan.Cells[todo[0]].Repeat
		k := 0
		for k < len(todo) && r.plan.Cells[todo[k]].Repeat == round {
			k++
		}
		// A failed cell fails the run at the end (ErrCellsFailed), not
		// the rounds after it.
		err = r.runCells(ctx, run, w, todo[:k])
		todo = todo[k:]
		if err != nil && !errors.Is(err, ErrCellsFailed) {
			break
		}
		r.chooseLength(run, spec, round)
		if len(todo) > 0 && r.cfg.Shard == nil {
			fmt.Fprintf(r.log, "%s\n", roundState(run, spec, round))
		}
	}
	stopped := ""
	for stopped == "" {
		switch {
		case ctx.Err() != nil:
			stopped = analysis.StoppedInterrupted
			if err == nil {
				err = ctx.Err() // between two rounds: still an interrupt
			}
		case err != nil && !errors.Is(err, ErrCellsFailed):
			stopped = analysis.StoppedFailed
		default:
			stopped = r.nextRound(run, spec)
		}
		if stopped != "" {
			break
		}
		from := len(r.plan.Cells)
		next, gerr := r.plan.WithRounds(r.plan.Rounds() + 1)
		if gerr != nil {
			err = gerr
			stopped = analysis.StoppedFailed
			break
		}
		r.plan = next
		run.Plan = experiment.PlanRecord(next.Cells)
		var more []int
		for i := from; i < len(next.Cells); i++ {
			more = append(more, i)
		}
		err = r.runCells(ctx, run, w, more)
	}
	rec, derr := analysis.NewRoundsRecord(run, spec, stopped, 0)
	if derr != nil {
		return errors.Join(err, derr)
	}
	rec.Length = r.length
	run.Rounds = rec
	fmt.Fprintf(r.log, "%s\n", roundsLine(rec))
	return err
}

// roundState is the progress line after a round of the minimum: each
// comparison's ratio and interval so far.
func roundState(run *record.Run, spec record.RoundsSpec, round int) string {
	ds, err := analysis.DecideRounds(run, spec)
	if err != nil || len(ds) == 0 {
		return fmt.Sprintf("after round %d: nothing to decide yet", round)
	}
	var parts []string
	for _, d := range ds {
		if d.Pairs == 0 {
			parts = append(parts, fmt.Sprintf("%s: no round measured both yet", d.Label))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.2fx%s (CI %s)", d.Label, d.Ratio, figureOf(d), d.CIText()))
	}
	return fmt.Sprintf("after round %d of the %d before the first look: %s", round, spec.MinRounds, strings.Join(parts, ", "))
}

// chooseLength is duration = "auto": once a round of the pilot length has
// run with every cell ok (the first, unless one of its cells failed), the
// cells of the rounds after it measure the length chosen from its
// per-second noise and its setup time (sequential.ChooseLength); a resumed
// run chooses again from the same cells, and so the same.
func (r *Runner) chooseLength(run *record.Run, spec record.RoundsSpec, round int) {
	if !r.m.Policy.DurationAuto || r.length != nil {
		return
	}
	var cells []sequential.CellNoise
	for _, c := range run.Cells {
		if c.Repeat != round || c.Status != record.CellOK || c.Result == nil {
			continue
		}
		var ps []float64
		for _, iv := range c.Intervals {
			if d := (iv.End - iv.Start).Seconds(); iv.Phase == engine.PhaseRun && d >= 0.5 {
				ps = append(ps, float64(iv.Events)/d)
			}
		}
		cells = append(cells, sequential.CellNoise{Name: c.Name, PerSecond: ps, Fixed: max(0, c.WallSeconds-c.Result.Elapsed.Seconds())})
	}
	names := map[string]bool{}
	for _, c := range r.plan.Cells {
		names[c.Name] = true
	}
	if len(cells) < len(names) {
		fmt.Fprintf(r.log, "duration auto: round %d had %d of %d cells ok; the length is chosen after a round with all of them\n", round, len(cells), len(names))
		return
	}
	ds, err := analysis.DecideRounds(run, spec)
	var cmp []sequential.Comparison
	for _, d := range ds {
		cmp = append(cmp, sequential.Comparison{X: d.X, Y: d.Y, Ratio: d.Ratio})
	}
	pilot := r.m.Duration
	rec := &record.LengthRecord{PilotSeconds: pilot.Seconds(), Seconds: pilot.Seconds()}
	rule, rerr := sequential.NewRule(0.05, max(1, spec.MinRounds), max(spec.MinRounds, spec.MaxRounds, 1))
	var choice sequential.LengthChoice
	if err == nil && rerr == nil {
		choice, err = sequential.ChooseLength(cells, cmp, rule, spec.Precision,
			int(experiment.MinAutoDuration/time.Second), int(r.m.Policy.DurationCap/time.Second))
	}
	switch {
	case err != nil || rerr != nil:
		rec.Why = fmt.Sprintf("kept the first round's %s: %v", pilot, errors.Join(err, rerr))
	default:
		rec.Seconds, rec.Why = float64(choice.Seconds), choice.Why
		r.plan = r.plan.WithDuration(round+1, time.Duration(choice.Seconds)*time.Second)
		run.Plan = experiment.PlanRecord(r.plan.Cells)
	}
	r.length = rec
	fmt.Fprintf(r.log, "duration auto: %s\n", rec.Why)
}

// nextRound decides the run's comparisons and returns why it stops, or ""
// to add a round.
func (r *Runner) nextRound(run *record.Run, spec record.RoundsSpec) string {
	if r.cfg.Shard != nil {
		return analysis.StoppedShard
	}
	ds, err := analysis.DecideRounds(run, spec)
	if err != nil || analysis.Decided(ds) {
		return analysis.StoppedDecided
	}
	rounds := r.plan.Rounds()
	if rounds >= spec.MaxRounds {
		return analysis.StoppedMaxRepeats
	}
	spent, perRound := roundsTime(run, rounds)
	if spec.BudgetSeconds > 0 && spent+perRound > spec.BudgetSeconds {
		fmt.Fprintf(r.log, "budget: %d rounds took %s; another (about %s) would end past the %s budget\n", rounds,
			secs(spent), secs(perRound), secs(spec.BudgetSeconds))
		return analysis.StoppedBudget
	}
	var open []string
	for _, d := range ds {
		if d.Outcome == analysis.OutcomeUndecided {
			open = append(open, fmt.Sprintf("%s %.2fx%s (CI %s)", d.Label, d.Ratio, figureOf(d), d.CIText()))
		}
	}
	fmt.Fprintf(r.log, "after %d rounds still undecided: %s; adding round %d\n", rounds, strings.Join(open, ", "), rounds+1)
	return ""
}

// roundsTime is the cells' wall time so far and a round's average, in
// seconds.
func roundsTime(run *record.Run, rounds int) (spent, perRound float64) {
	for _, c := range run.Cells {
		spent += c.WallSeconds
	}
	if rounds > 0 {
		perRound = spent / float64(rounds)
	}
	return spent, perRound
}

// growForResume makes the fresh plan of a resumed conclusive run as long
// as the stored one, and one round longer when the stored run stopped
// between rounds (interrupted) with its question still open; added is the
// cell runs of that round, which the stored plan does not have.
func (r *Runner) growForResume(old *record.Run) (added int, err error) {
	spec, ok := analysis.RoundsSpecOf(r.m)
	if !ok || old == nil {
		return 0, nil
	}
	rounds := 0
	for _, c := range old.Plan {
		rounds = max(rounds, c.Repeat)
	}
	if rounds > r.plan.Rounds() {
		if r.plan, err = r.plan.WithRounds(rounds); err != nil {
			return 0, err
		}
	}
	if len(old.Cells) < len(old.Plan) || old.Status == record.StatusFinished || r.cfg.Shard != nil || len(r.plan.Cells) != len(old.Plan) {
		return 0, nil
	}
	if r.nextRound(old, spec) != "" {
		return 0, nil
	}
	before := len(r.plan.Cells)
	if r.plan, err = r.plan.WithRounds(rounds + 1); err != nil {
		return 0, err
	}
	return len(r.plan.Cells) - before, nil
}

// roundsLine is the run's last progress line about its rounds.
func roundsLine(rec *record.RoundsRecord) string {
	took := secs(rec.WallSeconds)
	if analysis.Decided(rec.Decisions) {
		return fmt.Sprintf("conclusive after %d rounds, %s", rec.Rounds, took)
	}
	var open []string
	for _, d := range rec.Decisions {
		if d.Outcome == analysis.OutcomeUndecided {
			open = append(open, fmt.Sprintf("%s%s still undecided, CI %s", d.Label, figureOf(d), d.CIText()))
		}
	}
	return fmt.Sprintf("not conclusive (%s) after %d rounds, %s: %s", rec.Stopped, rec.Rounds, took, strings.Join(open, "; "))
}

// figureOf names the figure a decision is on when it is not tps (the
// cells' headline, e.g. " nopm"; an expectation's label names its column).
func figureOf(d record.RoundDecision) string {
	if d.Expectation != "" || d.Figure == "" || d.Figure == "tps" {
		return ""
	}
	return " " + d.Figure
}

func secs(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}
