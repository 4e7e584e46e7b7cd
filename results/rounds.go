package results

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/sequential"
)

// Rounds until the answer is sure (until = "conclusive", issue 26): which
// comparisons a run decides round by round, their decisions, what
// run.json records of it and the sentence that opens the Conclusion. The
// decisions come from the sequential package (a group-sequential exact sign
// test over the paired rounds, valid however many times the run looks);
// the ratio printed beside each is the Conclusion's (paired.go), so a
// reader sees one ratio.

// RoundsMethod names the decision method in run.json and summary.md.
const RoundsMethod = "two confidence sequences on the per-round log ratios, each at 2.5%: an anytime-valid t-test (scale-invariant Bayes factor, a mixture over effect sizes) and a group-sequential exact sign test (Pocock-type alpha spending); their intersection is the 95% interval"

// Why a conclusive run stopped.
const (
	StoppedDecided     = "decided"     // every comparison decided
	StoppedMaxRepeats  = "max_repeats" // max_repeats rounds run
	StoppedBudget      = "budget"      // the next round would end past the budget
	StoppedInterrupted = "interrupted"
	StoppedShard       = "shard"  // a shard runs its minimum rounds; merge decides over them
	StoppedFailed      = "failed" // the run failed before deciding
)

// Comparison outcomes in run.json.
const (
	OutcomeFaster     = "faster"     // x/y above 1, significant
	OutcomeSlower     = "slower"     // below 1, significant
	OutcomeEquivalent = "equivalent" // within the precision of no difference
	OutcomeUndecided  = "undecided"
)

// RoundsSpec, RoundDecision and RoundsRecord are run.json's "rounds"
// (record/rounds.go).
type (
	RoundsSpec    = record.RoundsSpec
	RoundDecision = record.RoundDecision
	RoundsRecord  = record.RoundsRecord
)

// RoundsSpecOf is the spec of a resolved conclusive manifest; ok is false
// for a run of fixed repeats.
func RoundsSpecOf(m *experiment.Manifest) (RoundsSpec, bool) {
	if m == nil || !m.Conclusive() {
		return RoundsSpec{}, false
	}
	return RoundsSpec{MinRounds: m.Repeats, MaxRounds: m.MaxRepeats, Precision: m.Precision, BudgetSeconds: m.Budget.Seconds()}, true
}

// Decided reports whether every comparison is decided.
func Decided(ds []RoundDecision) bool {
	for _, d := range ds {
		if d.Outcome == OutcomeUndecided {
			return false
		}
	}
	return len(ds) > 0
}

// DecideRounds decides every scenario-vs-baseline comparison and every
// pair of every expectation over the run's paired rounds. Each comparison
// is tested at 5 %; the pairs of one expectation at 5 % divided by their
// number (Bonferroni), so that the whole ordering holds at 5 %.
func DecideRounds(r *Run, spec RoundsSpec) ([]RoundDecision, error) {
	first, last := max(1, spec.MinRounds), max(spec.MinRounds, spec.MaxRounds, 1)
	rules := map[float64]*sequential.Rule{}
	signs := map[float64]*sequential.Boundaries{}
	rule := func(alpha float64) (*sequential.Rule, *sequential.Boundaries, error) {
		if r, ok := rules[alpha]; ok {
			return r, signs[alpha], nil
		}
		r, err := sequential.NewRule(alpha, first, last)
		if err != nil {
			return nil, nil, err
		}
		// The rule before the t-test joined it: the sign test at the whole
		// level, for "what it would have needed".
		s, err := sequential.Design{Alpha: alpha, First: first, Last: last}.Compute()
		rules[alpha], signs[alpha] = r, s
		return r, s, err
	}
	br := byRepeat(r)
	decide := func(rd RoundDecision, xs, ys []float64) (RoundDecision, error) {
		rl, sign, err := rule(rd.Alpha)
		if err != nil {
			return rd, err
		}
		var d []float64
		for i := range xs {
			if xs[i] > 0 && ys[i] > 0 && !math.IsInf(xs[i], 0) && !math.IsInf(ys[i], 0) {
				d = append(d, math.Log(xs[i]/ys[i]))
			}
		}
		dec := rl.Decide(d, spec.Precision)
		rd.Pairs, rd.Within = len(d), dec.Within
		rd.Ratio = RatioFromPairs(xs, ys).Ratio
		rd.Outcome = outcomeOf(dec.Outcome)
		rd.DecidedBy = dec.By
		rd.Noise = sdOf(d)
		rd.CILo, rd.CIHi = finiteOrZero(math.Exp(dec.Interval.Lo)), finiteOrZero(math.Exp(dec.Interval.Hi))
		if rd.Outcome != OutcomeUndecided {
			rd.SignOnlyRounds, rd.SignOnlyAtLeast = signOnly(sign, d, spec.Precision, dec.Outcome)
		}
		return rd, nil
	}
	var out []RoundDecision
	sums := r.Summaries()
	if r.Baseline != "" {
		for _, s := range sums {
			b := BaselineFor(r.Baseline, s, sums)
			if b == "" || b == s.Name {
				continue
			}
			fig, _ := ComparisonFigure(r, s.Name, b) // headline.go: the Conclusion's figure
			xs, ys := pairedValues(br, s.Name, b, fig.Name)
			rd, err := decide(RoundDecision{Label: s.Name + " vs " + b, X: s.Name, Y: b, Figure: fig.Name, Alpha: conclusionAlpha}, xs, ys)
			if err != nil {
				return nil, err
			}
			out = append(out, rd)
		}
	}
	for _, e := range runExpectations(r) {
		for _, g := range expectGroups(e, sums) {
			alpha := conclusionAlpha / float64(len(e.Ops))
			for i, op := range e.Ops {
				l, rt := e.Terms[i], e.Terms[i+1]
				hi, lo, hiT, loT := g.cells[i+1], g.cells[i], rt, l
				if op == ">" {
					hi, lo, hiT, loT = g.cells[i], g.cells[i+1], l, rt
				}
				xs, ys := pairedValues(br, hi, lo, e.Column)
				target := loT.Factor / hiT.Factor
				for j := range ys {
					ys[j] *= target
				}
				label := termText(hiT) + " > " + termText(loT)
				if e.Column != "tps" {
					label = e.Column + ": " + label
				}
				rd, err := decide(RoundDecision{Label: label, Expectation: e.Text, Group: g.label, X: hi, Y: lo, Figure: e.Column, Alpha: alpha}, xs, ys)
				if err != nil {
					return nil, err
				}
				out = append(out, rd)
			}
		}
	}
	return out, nil
}

// sdOf is the sample standard deviation of xs; 0 for fewer than two.
func sdOf(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return math.Sqrt(v / float64(len(xs)-1))
}

func outcomeOf(o sequential.Outcome) string {
	if out, ok := map[sequential.Outcome]string{sequential.Higher: OutcomeFaster, sequential.Lower: OutcomeSlower,
		sequential.Equivalent: OutcomeEquivalent}[o]; ok {
		return out
	}
	return OutcomeUndecided
}

// signOnly is the round at which the sign test alone decides the pairs d
// as the rule did (looking after every round as the run does), or, when it
// does not within them, the first round at which it could (at least).
func signOnly(sign *sequential.Boundaries, d []float64, precision float64, want sequential.Outcome) (int, bool) {
	for n := sign.Design.First; n <= len(d); n++ {
		if o := sign.Decide(d[:n], precision).Outcome; o.Decided() {
			if o == want {
				return n, false
			}
			break
		}
	}
	return max(len(d)+1, sign.FirstDecisive()), true
}

// runExpectations are the run's expect entries, from the stored manifest.
func runExpectations(r *Run) []experiment.Expectation {
	if r.Manifest == "" {
		return nil
	}
	m, err := experiment.Parse(r.ManifestPath, r.Manifest)
	if err != nil {
		return nil
	}
	var out []experiment.Expectation
	for _, text := range m.Expect {
		if e, err := experiment.ParseExpect(text); err == nil {
			out = append(out, e)
		}
	}
	return out
}

func finiteOrZero(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}
	return x
}

// roundsOf is the record a run's Conclusion speaks of: the one the runner
// stored, or, for a run made of shards (merge) of a conclusive manifest,
// the decisions over the rounds the shards ran.
func roundsOf(r *Run) *RoundsRecord {
	if r.Rounds != nil {
		return r.Rounds
	}
	if r.Manifest == "" || r.Shard == nil {
		return nil
	}
	m, err := experiment.Parse(r.ManifestPath, r.Manifest)
	if err != nil || !m.Conclusive() {
		return nil
	}
	p, err := experiment.Resolve(m, experiment.Flags{})
	if err != nil {
		return nil
	}
	spec, _ := RoundsSpecOf(p.Manifest)
	rec, err := NewRoundsRecord(r, spec, StoppedShard, 0)
	if err != nil {
		return nil
	}
	return rec
}

// NewRoundsRecord decides the run's comparisons and records why it stopped.
// wall is the rounds' wall time; 0 adds up the cells' own.
func NewRoundsRecord(r *Run, spec RoundsSpec, stopped string, wall time.Duration) (*RoundsRecord, error) {
	ds, err := DecideRounds(r, spec)
	if err != nil {
		return nil, err
	}
	rec := &RoundsRecord{RoundsSpec: spec, Method: RoundsMethod, Rounds: wholeRounds(r), WallSeconds: wall.Seconds(), Stopped: stopped, Decisions: ds}
	if wall == 0 {
		for _, c := range r.Cells {
			rec.WallSeconds += c.WallSeconds
		}
	}
	return rec, nil
}

// wholeRounds is the number of rounds in which every planned cell ran
// (failed or not).
func wholeRounds(r *Run) int {
	per := map[int]int{}
	names := map[string]bool{}
	for _, c := range r.Plan {
		names[c.Name] = true
	}
	for _, c := range r.Cells {
		per[c.Repeat]++
	}
	n := 0
	for k := 1; per[k] >= len(names) && len(names) > 0; k++ {
		n = k
	}
	return n
}

// writeRounds opens the Conclusion of a conclusive run: whether it is
// conclusive, after how many rounds and how long, or what is still
// undecided and its interval; then every comparison's decision. A run whose
// comparisons are all decided concludes something even when no difference
// is significant ("no difference within 5 %" is an answer).
func writeRounds(w io.Writer, r *Run, c *Conclusion) {
	rec := roundsOf(r)
	if rec == nil {
		return
	}
	took := (time.Duration(rec.WallSeconds) * time.Second).Round(time.Second)
	var open []string
	for _, d := range rec.Decisions {
		if d.Outcome == OutcomeUndecided {
			open = append(open, fmt.Sprintf("%s still undecided, CI %s", d.Label, d.CIText()))
		}
	}
	stillOpen := strings.Join(open, "; ")
	switch {
	case len(rec.Decisions) == 0:
		fmt.Fprintf(w, "**Rounds: nothing to decide** after %d round%s, %s: no pair of cells measured in the same rounds.\n\n", rec.Rounds, pl(rec.Rounds), took)
	case Decided(rec.Decisions):
		fmt.Fprintf(w, "**Conclusive after %d round%s, %s**: every comparison is decided%s.\n\n", rec.Rounds, pl(rec.Rounds), took, savedText(rec))
	case rec.Stopped == StoppedBudget:
		fmt.Fprintf(w, "**Budget spent** (%s of %s, %d round%s): %s.\n\n", took, time.Duration(rec.BudgetSeconds*float64(time.Second)).Round(time.Second), rec.Rounds, pl(rec.Rounds), stillOpen)
	case rec.Stopped == StoppedMaxRepeats:
		fmt.Fprintf(w, "**Budget spent** (max_repeats: %d rounds, %s): %s.\n\n", rec.Rounds, took, stillOpen)
	case rec.Stopped == StoppedShard:
		fmt.Fprintf(w, "**Not conclusive: a sharded run** (shards run the minimum %d round%s; only a whole run adds rounds): %s.\n\n", rec.MinRounds, pl(rec.MinRounds), stillOpen)
	default:
		fmt.Fprintf(w, "**Not conclusive: the run %s** after %d round%s, %s: %s.\n\n", map[string]string{StoppedInterrupted: "was interrupted", StoppedFailed: "failed"}[rec.Stopped], rec.Rounds, pl(rec.Rounds), took, stillOpen)
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
			fig = " " + figureLabel(r, d.Figure) // headline.go: "NOPM"
		}
		fmt.Fprintf(w, "- %s%s: %s\n", d.Label, g, decisionText(d, fig, rec.Precision))
	}
	fmt.Fprintf(w, "\nRounds are added until each comparison is decided: significant, or its interval within %g%% of no difference (%.3f–%.3f); "+
		"the decision reads %s, so looking after every round keeps its 95%% level; at least %d, at most %d rounds",
		rec.Precision*100, 1/(1+rec.Precision), 1+rec.Precision, RoundsMethod, rec.MinRounds, rec.MaxRounds)
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
	if Decided(rec.Decisions) && c.Nothing {
		c.Nothing = false
	}
	c.Warnings = append(c.Warnings, "rounds were added until the answer was sure: the p-values and intervals of the ratio lines and of the expectations are those of a fixed number of rounds, which looking after every round makes too optimistic; quote the rounds' decisions at the top of the Conclusion")
}

// savedText says what deciding from the size of the differences saved: ";
// the t-test decided 2 of them from the size of the differences; the sign
// test alone (the rule before) needs at least 7 rounds, about 2m10s at this
// run's pace". "" when the sign test alone would have stopped as early.
func savedText(rec *RoundsRecord) string {
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
func decisionText(d RoundDecision, fig string, precision float64) string {
	what := map[string]string{
		OutcomeFaster:     "higher, significant",
		OutcomeSlower:     "lower, significant",
		OutcomeEquivalent: fmt.Sprintf("no difference within %g%%", precision*100),
		OutcomeUndecided:  "undecided",
	}[d.Outcome]
	if d.Expectation != "" {
		switch d.Outcome {
		case OutcomeFaster:
			what = "holds, significant"
		case OutcomeSlower:
			what = "broken, significant"
		}
	}
	if d.Within && d.Outcome != OutcomeEquivalent {
		what += fmt.Sprintf(", and within %g%%", precision*100)
	}
	return fmt.Sprintf("**%.2fx**%s, %s (95%% CI %s, %d round%s)", d.Ratio, fig, what, d.CIText(), d.Pairs, pl(d.Pairs))
}

// decideExpectations makes the rounds' decisions the expectations' status
// in a conclusive run, so that summary.md, run.json and run --check agree
// with the sequential test rather than with a fixed-rounds test that
// looking after every round makes too optimistic: an expectation holds
// when every pair of it was decided the expected way, is broken when a pair
// was decided the other way, and is not shown otherwise.
func decideExpectations(es []ExpectResult, rec *RoundsRecord) {
	if rec == nil {
		return
	}
	for i := range es {
		e := &es[i]
		var pairs []RoundDecision
		for _, d := range rec.Decisions {
			if d.Expectation == e.Text && d.Group == e.Group {
				pairs = append(pairs, d)
			}
		}
		if len(pairs) == 0 {
			continue
		}
		status := ExpectHeld
		for _, d := range pairs {
			switch {
			case d.Outcome == OutcomeSlower:
				status = ExpectBroken
			case d.Outcome != OutcomeFaster && status == ExpectHeld:
				status = ExpectNotShown
			}
		}
		e.Status = status
		e.Detail += fmt.Sprintf("; decided by the rounds' sequential test over %d round%s", rec.Rounds, pl(rec.Rounds))
	}
}

// roundsIntervals gives each scenario-vs-baseline ratio of a conclusive run
// the rounds' interval (the confidence sequence, valid however often the
// run looked) in place of the fixed-rounds one, so that the Conclusion, the
// Results table, the pivot and the plots show one ratio with one interval.
// A side the looks have not bounded yet leaves the ratio without one.
func roundsIntervals(ls []RatioLine, rec *RoundsRecord) {
	if rec == nil {
		return
	}
	for i := range ls {
		l := &ls[i]
		for _, d := range rec.Decisions {
			if d.Expectation != "" || d.X != l.Cell || d.Y != l.Baseline {
				continue
			}
			l.Ratio.Lo, l.Ratio.Hi, l.Ratio.CIOK, l.Ratio.Coverage = math.NaN(), math.NaN(), false, 0
			if d.CILo > 0 && d.CIHi > 0 {
				l.Ratio.Lo, l.Ratio.Hi, l.Ratio.CIOK, l.Ratio.Coverage = d.CILo, d.CIHi, true, 1-d.Alpha
			}
		}
	}
}

// undecidedWhy says in one sentence why a run that spent its rounds left a
// comparison undecided: how far apart its per-round ratios were, against
// the precision asked for, and what disturbed the rounds (stalls, other
// load on the host). "" when everything is decided or the run stopped for
// another reason.
func undecidedWhy(r *Run, rec *RoundsRecord) string {
	if rec.Stopped != StoppedBudget && rec.Stopped != StoppedMaxRepeats {
		return ""
	}
	br := byRepeat(r)
	var parts []string
	for _, d := range rec.Decisions {
		if d.Outcome != OutcomeUndecided || d.Expectation != "" {
			continue
		}
		fig := d.Figure
		if fig == "" {
			fig = "tps" // decided before decisions named their figure
		}
		xs, ys := pairedValues(br, d.X, d.Y, fig)
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
			label = " " + figureLabel(r, fig)
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
		if c.Status != CellOK {
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
func failedRuns(r *Run, x, y string) string {
	count := map[string]int{}
	for _, c := range r.Cells {
		if c.Status != CellOK && (c.Name == x || c.Name == y) {
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
