package results

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/section"
)

// The Conclusion's part of a conclusive run (until = "conclusive", issue
// 26): the sentence that opens it, every comparison's decision and what
// the decisions make of the expectations and the ratios. The decisions are
// analysis's (analysis/rounds.go: DecideRounds).

// writeRounds opens the Conclusion of a conclusive run: whether it is
// conclusive, after how many rounds and how long, or what is still
// undecided and its interval; then every comparison's decision. A run whose
// comparisons are all decided concludes something even when no difference
// is significant ("no difference within 5 %" is an answer).
func writeRounds(w io.Writer, r *record.Run, c *Conclusion) {
	rec := analysis.RoundsOf(r)
	if rec == nil {
		return
	}
	took := (time.Duration(rec.WallSeconds) * time.Second).Round(time.Second)
	var open []string
	for _, d := range rec.Decisions {
		if d.Outcome == analysis.OutcomeUndecided {
			open = append(open, fmt.Sprintf("%s still undecided, CI %s", d.Label, d.CIText()))
		}
	}
	stillOpen := strings.Join(open, "; ")
	switch {
	case len(rec.Decisions) == 0:
		fmt.Fprintf(w, "**Rounds: nothing to decide** after %d round%s, %s: no pair of cells measured in the same rounds.\n\n", rec.Rounds, section.Plural(rec.Rounds), took)
	case analysis.Decided(rec.Decisions):
		fmt.Fprintf(w, "**Conclusive after %d round%s, %s**: every comparison is decided%s.\n\n", rec.Rounds, section.Plural(rec.Rounds), took, savedText(rec))
	case rec.Stopped == analysis.StoppedBudget:
		fmt.Fprintf(w, "**Budget spent** (%s of %s, %d round%s): %s.\n\n", took, time.Duration(rec.BudgetSeconds*float64(time.Second)).Round(time.Second), rec.Rounds, section.Plural(rec.Rounds), stillOpen)
	case rec.Stopped == analysis.StoppedMaxRepeats:
		fmt.Fprintf(w, "**Budget spent** (max_repeats: %d rounds, %s): %s.\n\n", rec.Rounds, took, stillOpen)
	case rec.Stopped == analysis.StoppedShard:
		fmt.Fprintf(w, "**Not conclusive: a sharded run** (shards run the minimum %d round%s; only a whole run adds rounds): %s.\n\n", rec.MinRounds, section.Plural(rec.MinRounds), stillOpen)
	default:
		fmt.Fprintf(w, "**Not conclusive: the run %s** after %d round%s, %s: %s.\n\n", map[string]string{analysis.StoppedInterrupted: "was interrupted", analysis.StoppedFailed: "failed"}[rec.Stopped], rec.Rounds, section.Plural(rec.Rounds), took, stillOpen)
	}
	for _, d := range rec.Decisions {
		g := ""
		if d.Expectation != "" {
			g = fmt.Sprintf(" (of `%s`", d.Expectation)
			if d.Group != "" {
				g += " at " + d.Group
			}
			g += fmt.Sprintf(", at %.3g)", d.Alpha)
		}
		fig := ""
		if d.Expectation == "" && d.Figure != "" && d.Figure != "tps" {
			fig = " " + analysis.FigureLabel(r, d.Figure) // analysis/headline.go: "NOPM"
		}
		fmt.Fprintf(w, "- %s%s: %s\n", d.Label, g, decisionText(d, fig, rec.Precision))
	}
	fmt.Fprintf(w, "\nRounds are added until each comparison is decided: significant, or its interval within %g%% of no difference (%.3f–%.3f); "+
		"the decision reads %s, so looking after every round keeps its 95%% level; at least %d, at most %d rounds",
		rec.Precision*100, 1/(1+rec.Precision), 1+rec.Precision, analysis.RoundsMethod, rec.MinRounds, rec.MaxRounds)
	if rec.BudgetSeconds > 0 {
		fmt.Fprintf(w, ", budget %s", time.Duration(rec.BudgetSeconds*float64(time.Second)).Round(time.Second))
	}
	fmt.Fprintf(w, ".")
	var noise []string
	for _, d := range rec.Decisions {
		if d.Expectation == "" && d.Noise > 0 {
			noise = append(noise, fmt.Sprintf("%s %.1f%%", d.Label, 100*d.Noise))
		}
	}
	if len(noise) > 0 {
		fmt.Fprintf(w, " Noise per round (the spread of a round's log ratio, which `plan` assumes to be %g%% when it estimates the time to a decision): %s.", 100*experiment.PlanNoise, strings.Join(noise, ", "))
	}
	fmt.Fprintf(w, "\n\n")
	if rec.Length != nil {
		fmt.Fprintf(w, "duration = \"auto\": the first round measured %s a cell; %s.\n\n",
			time.Duration(rec.Length.PilotSeconds*float64(time.Second)), rec.Length.Why)
	}
	if why := undecidedWhy(r, rec); why != "" {
		fmt.Fprintf(w, "%s\n\n", why)
	}
	if analysis.Decided(rec.Decisions) && c.Nothing {
		c.Nothing = false
	}
	c.Warnings = append(c.Warnings, "rounds were added until the answer was sure: the p-values and intervals of the ratio lines and of the expectations are those of a fixed number of rounds, which looking after every round makes too optimistic; quote the rounds' decisions at the top of the Conclusion")
}

// savedText says what deciding from the size of the differences saved: ";
// the t-test decided 2 of them from the size of the differences; the sign
// test alone (the rule before) needs at least 7 rounds, about 2m10s at this
// run's pace". "" when the sign test alone would have stopped as early.
func savedText(rec *record.RoundsRecord) string {
	need, atLeast, byT := 0, false, 0
	for _, d := range rec.Decisions {
		if d.DecidedBy == "t" {
			byT++
		}
		if d.SignOnlyRounds > need {
			need, atLeast = d.SignOnlyRounds, d.SignOnlyAtLeast
		} else if d.SignOnlyRounds == need && d.SignOnlyAtLeast {
			atLeast = true
		}
	}
	if need <= rec.Rounds || rec.Rounds == 0 {
		return ""
	}
	out := ""
	if byT > 0 {
		out = fmt.Sprintf("; the t-test decided %d of them from the size of the differences", byT)
	}
	bound := ""
	if atLeast {
		bound = "at least "
	}
	per := rec.WallSeconds / float64(rec.Rounds)
	return out + fmt.Sprintf("; the sign test alone (the rule before) needs %s%d rounds, about %s at this run's pace",
		bound, need, time.Duration(per*float64(need)*float64(time.Second)).Round(time.Second))
}

// decisionText is "**1.85x**, faster (95% CI 1.62–2.10, 7 rounds)", and
// "**1.85x** NOPM, ..." with fig " NOPM" (a figure other than tps).
func decisionText(d record.RoundDecision, fig string, precision float64) string {
	what := map[string]string{
		analysis.OutcomeFaster:     "higher, significant",
		analysis.OutcomeSlower:     "lower, significant",
		analysis.OutcomeEquivalent: fmt.Sprintf("no difference within %g%%", precision*100),
		analysis.OutcomeUndecided:  "undecided",
	}[d.Outcome]
	if d.Expectation != "" {
		switch d.Outcome {
		case analysis.OutcomeFaster:
			what = "holds, significant"
		case analysis.OutcomeSlower:
			what = "broken, significant"
		}
	}
	if d.Within && d.Outcome != analysis.OutcomeEquivalent {
		what += fmt.Sprintf(", and within %g%%", precision*100)
	}
	return fmt.Sprintf("**%.2fx**%s, %s (95%% CI %s, %d round%s)", d.Ratio, fig, what, d.CIText(), d.Pairs, section.Plural(d.Pairs))
}

// undecidedWhy says in one sentence why a run that spent its rounds left a
// comparison undecided: how far apart its per-round ratios were, against
// the precision asked for, and what disturbed the rounds (stalls, other
// load on the host). "" when everything is decided or the run stopped for
// another reason.
func undecidedWhy(r *record.Run, rec *record.RoundsRecord) string {
	if rec.Stopped != analysis.StoppedBudget && rec.Stopped != analysis.StoppedMaxRepeats {
		return ""
	}
	br := analysis.ByRepeat(r)
	var parts []string
	for _, d := range rec.Decisions {
		if d.Outcome != analysis.OutcomeUndecided || d.Expectation != "" {
			continue
		}
		fig := d.Figure
		if fig == "" {
			fig = "tps" // decided before decisions named their figure
		}
		xs, ys := analysis.PairedValues(br, d.X, d.Y, fig)
		lo, hi, n := math.Inf(1), math.Inf(-1), 0
		for i := range xs {
			if xs[i] > 0 && ys[i] > 0 {
				q := xs[i] / ys[i]
				lo, hi = math.Min(lo, q), math.Max(hi, q)
				n++
			}
		}
		if math.IsInf(lo, 0) {
			continue
		}
		label := "" // tps, as these sentences always said
		if fig != "tps" {
			label = " " + analysis.FigureLabel(r, fig)
		}
		part := fmt.Sprintf("%s's per-round%s ratios ranged %.2f–%.2f", d.Label, label, lo, hi)
		if lo > 1 || hi < 1 {
			part = fmt.Sprintf("%s's per-round%s ratios all pointed one way (%.2f–%.2f) but %d rounds are too few for the sequential test at its level", d.Label, label, lo, hi, n)
		}
		if n < rec.Rounds {
			part += fmt.Sprintf(", and only %d of %d rounds measured both cells (%s)", n, rec.Rounds, failedRuns(r, d.X, d.Y))
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	stalled, contended, runs := 0, 0, 0
	for _, c := range r.Cells {
		if c.Status != record.CellOK {
			continue
		}
		runs++
		if c.Stalls != nil && c.Stalls.Count > 0 {
			stalled++
		}
		if c.Contention != nil && c.Contention.Contended {
			contended++
		}
	}
	var causes []string
	if stalled > 0 {
		causes = append(causes, fmt.Sprintf("stalls in %d of %d cell runs", stalled, runs))
	}
	if contended > 0 {
		causes = append(causes, fmt.Sprintf("other load on the host in %d of %d", contended, runs))
	}
	cause := ""
	if len(causes) > 0 {
		cause = " (" + strings.Join(causes, ", ") + ")"
	}
	return fmt.Sprintf("Why it is undecided here: %s%s; against the %g%% difference the question asks about, %d rounds could neither show a difference nor rule one out; a larger budget (max_repeats, budget), longer cells or a quieter host would.",
		strings.Join(parts, "; "), cause, rec.Precision*100, rec.Rounds)
}

// failedRuns says how many runs of cells x and y failed: "async failed in
// 4, galera-fc16 in 1".
func failedRuns(r *record.Run, x, y string) string {
	count := map[string]int{}
	for _, c := range r.Cells {
		if c.Status != record.CellOK && (c.Name == x || c.Name == y) {
			count[c.Name]++
		}
	}
	var out []string
	for _, name := range []string{x, y} {
		if count[name] > 0 {
			out = append(out, fmt.Sprintf("%s failed in %d", name, count[name]))
		}
	}
	if len(out) == 0 {
		return "the others were not run in both"
	}
	return strings.Join(out, ", ")
}
