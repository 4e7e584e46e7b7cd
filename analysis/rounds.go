package analysis

import (
	"math"
	"time"

	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/sequential"
)

// Rounds until the answer is sure (until = "conclusive", issue 26): which
// comparisons a run decides round by round, their decisions and what
// run.json records of it (the runner asks DecideRounds after every round;
// results writes the sentences, results/rounds.go). The
// decisions come from the sequential package (a group-sequential exact sign
// test over the paired rounds, valid however many times the run looks);
// the ratio printed beside each is the Conclusion's (paired.go, RatioFromPairs), so a
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

// RoundsSpecOf is the spec of a resolved conclusive manifest; ok is false
// for a run of fixed repeats.
func RoundsSpecOf(m *experiment.Manifest) (record.RoundsSpec, bool) {
	if m == nil || !m.Conclusive() {
		return record.RoundsSpec{}, false
	}
	return record.RoundsSpec{MinRounds: m.Repeats, MaxRounds: m.MaxRepeats, Precision: m.Precision, BudgetSeconds: m.Budget.Seconds()}, true
}

// Decided reports whether every comparison is decided.
func Decided(ds []record.RoundDecision) bool {
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
func DecideRounds(r *record.Run, spec record.RoundsSpec) ([]record.RoundDecision, error) {
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
	br := ByRepeat(r)
	decide := func(rd record.RoundDecision, xs, ys []float64) (record.RoundDecision, error) {
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
	var out []record.RoundDecision
	sums := r.Summaries()
	if r.Baseline != "" {
		for _, s := range sums {
			b := BaselineFor(r.Baseline, s, sums)
			if b == "" || b == s.Name {
				continue
			}
			fig, _ := ComparisonFigure(r, s.Name, b) // headline.go: the Conclusion's figure
			xs, ys := PairedValues(br, s.Name, b, fig.Name)
			rd, err := decide(record.RoundDecision{Label: s.Name + " vs " + b, X: s.Name, Y: b, Figure: fig.Name, Alpha: Alpha}, xs, ys)
			if err != nil {
				return nil, err
			}
			out = append(out, rd)
		}
	}
	for _, e := range Expectations(r) {
		for _, g := range ExpectGroups(e, sums) {
			alpha := Alpha / float64(len(e.Ops))
			for i, op := range e.Ops {
				l, rt := e.Terms[i], e.Terms[i+1]
				hi, lo, hiT, loT := g.Cells[i+1], g.Cells[i], rt, l
				if op == ">" {
					hi, lo, hiT, loT = g.Cells[i], g.Cells[i+1], l, rt
				}
				xs, ys := PairedValues(br, hi, lo, e.Column)
				target := loT.Factor / hiT.Factor
				for j := range ys {
					ys[j] *= target
				}
				label := TermText(hiT) + " > " + TermText(loT)
				if e.Column != "tps" {
					label = e.Column + ": " + label
				}
				rd, err := decide(record.RoundDecision{Label: label, Expectation: e.Text, Group: g.Label, X: hi, Y: lo, Figure: e.Column, Alpha: alpha}, xs, ys)
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

func finiteOrZero(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return 0
	}
	return x
}

// RoundsOf is the record a run's Conclusion speaks of: the one the runner
// stored, or, for a run made of shards (merge) of a conclusive manifest,
// the decisions over the rounds the shards ran.
func RoundsOf(r *record.Run) *record.RoundsRecord {
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
func NewRoundsRecord(r *record.Run, spec record.RoundsSpec, stopped string, wall time.Duration) (*record.RoundsRecord, error) {
	ds, err := DecideRounds(r, spec)
	if err != nil {
		return nil, err
	}
	rec := &record.RoundsRecord{RoundsSpec: spec, Method: RoundsMethod, Rounds: wholeRounds(r), WallSeconds: wall.Seconds(), Stopped: stopped, Decisions: ds}
	if wall == 0 {
		for _, c := range r.Cells {
			rec.WallSeconds += c.WallSeconds
		}
	}
	return rec, nil
}

// wholeRounds is the number of rounds in which every planned cell ran
// (failed or not).
func wholeRounds(r *record.Run) int {
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
