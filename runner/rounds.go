package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"benchmatrix/experiment"
	"benchmatrix/results"
)

// until = "conclusive" (issue 26): the plan holds the minimum rounds; after
// they ran, the runner asks the decision (results.DecideRounds) after every
// round and adds a paired round (every cell once, in the plan's order:
// experiment.Plan.WithRounds) until every comparison is decided, or
// max_repeats rounds ran, or the next round, at the rounds' average time so
// far, would end past the budget. run.json's "rounds" records the rounds,
// their time, why the run stopped and every decision. A shard runs its
// minimum rounds only: rounds are added as the answers come in, which
// shards running apart cannot do; merge decides over the rounds they ran.

// runRounds runs the cell runs todo and, for a conclusive plan, the
// rounds it adds.
func (r *Runner) runRounds(ctx context.Context, run *results.Run, w Sink, todo []int) error {
	spec, ok := results.RoundsSpecOf(r.m)
	if !ok {
		return r.runCells(ctx, run, w, todo)
	}
	err := r.runCells(ctx, run, w, todo)
	stopped := ""
	for stopped == "" {
		switch {
		case ctx.Err() != nil:
			stopped = results.StoppedInterrupted
			if err == nil {
				err = ctx.Err() // between two rounds: still an interrupt
			}
		case err != nil && !errors.Is(err, ErrCellsFailed):
			stopped = results.StoppedFailed
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
			stopped = results.StoppedFailed
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
	rec, derr := results.NewRoundsRecord(run, spec, stopped, 0)
	if derr != nil {
		return errors.Join(err, derr)
	}
	run.Rounds = rec
	fmt.Fprintf(r.log, "%s\n", roundsLine(rec))
	return err
}

// nextRound decides the run's comparisons and returns why it stops, or ""
// to add a round.
func (r *Runner) nextRound(run *results.Run, spec results.RoundsSpec) string {
	if r.cfg.Shard != nil {
		return results.StoppedShard
	}
	ds, err := results.DecideRounds(run, spec)
	if err != nil || results.Decided(ds) {
		return results.StoppedDecided
	}
	rounds := r.plan.Rounds()
	if rounds >= spec.MaxRounds {
		return results.StoppedMaxRepeats
	}
	spent, perRound := roundsTime(run, rounds)
	if spec.BudgetSeconds > 0 && spent+perRound > spec.BudgetSeconds {
		fmt.Fprintf(r.log, "budget: %d rounds took %s; another (about %s) would end past the %s budget\n", rounds,
			secs(spent), secs(perRound), secs(spec.BudgetSeconds))
		return results.StoppedBudget
	}
	var open []string
	for _, d := range ds {
		if d.Outcome == results.OutcomeUndecided {
			open = append(open, fmt.Sprintf("%s %.2fx%s (CI %s)", d.Label, d.Ratio, figureOf(d), d.CIText()))
		}
	}
	fmt.Fprintf(r.log, "after %d rounds still undecided: %s; adding round %d\n", rounds, strings.Join(open, ", "), rounds+1)
	return ""
}

// roundsTime is the cells' wall time so far and a round's average, in
// seconds.
func roundsTime(run *results.Run, rounds int) (spent, perRound float64) {
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
func (r *Runner) growForResume(old *results.Run) (added int, err error) {
	spec, ok := results.RoundsSpecOf(r.m)
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
	if len(old.Cells) < len(old.Plan) || old.Status == results.StatusFinished || r.cfg.Shard != nil || len(r.plan.Cells) != len(old.Plan) {
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
func roundsLine(rec *results.RoundsRecord) string {
	took := secs(rec.WallSeconds)
	if results.Decided(rec.Decisions) {
		return fmt.Sprintf("conclusive after %d rounds, %s", rec.Rounds, took)
	}
	var open []string
	for _, d := range rec.Decisions {
		if d.Outcome == results.OutcomeUndecided {
			open = append(open, fmt.Sprintf("%s%s still undecided, CI %s", d.Label, figureOf(d), d.CIText()))
		}
	}
	return fmt.Sprintf("not conclusive (%s) after %d rounds, %s: %s", rec.Stopped, rec.Rounds, took, strings.Join(open, "; "))
}

// figureOf names the figure a decision is on when it is not tps (the
// cells' headline, e.g. " nopm"; an expectation's label names its column).
func figureOf(d results.RoundDecision) string {
	if d.Expectation != "" || d.Figure == "" || d.Figure == "tps" {
		return ""
	}
	return " " + d.Figure
}

func secs(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}
