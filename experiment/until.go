package experiment

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"benchmatrix/engine"
	"benchmatrix/sequential"
)

// until = "conclusive" (issue 26): the run measures its repeats (the
// minimum rounds), then adds one paired round at a time (every cell once,
// in the plan's order) until every scenario-vs-baseline comparison and
// every expectation is decided, or max_repeats rounds or the budget are
// spent. The decision is the sequential package's; the runner's loop is
// runner/rounds.go, the record analysis/rounds.go, the Conclusion's
// sentence results/rounds.go.

// The until values.
const (
	// UntilRepeats runs exactly repeats rounds (the default).
	UntilRepeats = "repeats"
	// UntilConclusive adds rounds until the answer is sure.
	UntilConclusive = "conclusive"
)

// Defaults under until = "conclusive".
const (
	// DefaultMinRounds is the rounds run before the first look, when the
	// manifest and the flags leave repeats out.
	DefaultMinRounds = 3
	// DefaultMaxRepeats is the most rounds a conclusive run adds up to.
	DefaultMaxRepeats = 12
	// DefaultPrecision: "no difference" when the ratio's interval lies
	// within 1/1.05 .. 1.05.
	DefaultPrecision = 0.05
	// MaxRoundsLimit bounds max_repeats.
	MaxRoundsLimit = 100
)

// Conclusive reports whether the manifest asks for rounds until the
// answer is sure.
func (m *Manifest) Conclusive() bool { return m.Until == UntilConclusive }

// untilKey decodes [experiment] until, max_repeats, budget and precision.
func (d *decoder) untilKey(key, k string, v any, m *Manifest) {
	switch k {
	case "until":
		if s, ok := d.str(key, v); ok {
			if s != UntilConclusive && s != UntilRepeats {
				d.problem(key, "%q: want %q (add rounds until every comparison is decided) or %q (exactly repeats rounds)", s, UntilConclusive, UntilRepeats)
			}
			m.Until = s
		}
	case "max_repeats":
		n, ok := v.(int64)
		switch {
		case !ok:
			d.problem(key, "want an integer, got a %s", typeName(v))
		case n < 1 || n > MaxRoundsLimit:
			d.problem(key, "must be between 1 and %d (got %d)", MaxRoundsLimit, n)
		default:
			m.MaxRepeats = int(n)
		}
	case "budget":
		dur, err := ParseDuration(v)
		switch {
		case err != nil:
			d.problem(key, "%v", err)
		case dur == 0:
			d.problem(key, "must be more than 0 (leave it out for no time budget)")
		default:
			m.Budget = dur
		}
	case "precision":
		f, ok := v.(float64)
		if n, isInt := v.(int64); isInt {
			f, ok = float64(n), true
		}
		if !ok || !(f > 0 && f < 1) {
			d.problem(key, "want a fraction between 0 and 1, e.g. 0.05 (no difference: the ratio's interval within 1/1.05..1.05)")
			return
		}
		m.Precision = f
	}
}

// applyUntil brings the flags (--until, --max-repeats, --budget) onto the
// manifest and settles the defaults that depend on until: the minimum
// rounds (repeats, 3 unless given), max_repeats (12) and precision (0.05).
func (d *decoder) applyUntil(m *Manifest, f Flags) {
	if f.Until != "" {
		if f.Until != UntilConclusive && f.Until != UntilRepeats {
			d.problems = append(d.problems, Problem{Key: "--until", Msg: fmt.Sprintf("%q: want %s or %s", f.Until, UntilConclusive, UntilRepeats)})
		}
		m.Until = f.Until
	}
	if f.MaxRepeats < 0 || f.MaxRepeats > MaxRoundsLimit {
		d.problems = append(d.problems, Problem{Key: "--max-repeats", Msg: fmt.Sprintf("must be between 1 and %d", MaxRoundsLimit)})
	} else if f.MaxRepeats > 0 {
		m.MaxRepeats = f.MaxRepeats
	}
	if f.Budget != nil {
		if *f.Budget <= 0 {
			d.problems = append(d.problems, Problem{Key: "--budget", Msg: "must be more than 0"})
		}
		m.Budget = *f.Budget
	}
	if !m.Conclusive() {
		return
	}
	if f.Repeats == 0 && !d.isSet("experiment.repeats") {
		m.Repeats = DefaultMinRounds
	}
	if m.MaxRepeats == 0 {
		m.MaxRepeats = max(DefaultMaxRepeats, m.Repeats)
	}
	if m.Precision == 0 {
		m.Precision = DefaultPrecision
	}
}

// validateUntil checks the until keys against the rest of the manifest.
func (d *decoder) validateUntil(m *Manifest) {
	if !m.Conclusive() && m.Policy.DurationAuto {
		d.problem("experiment.duration", "\"auto\" chooses the cells' length from the first round for the rounds that follow: it needs until = %q", UntilConclusive)
	}
	if !m.Conclusive() {
		if d.isSet("experiment.until") {
			return // until = "repeats", or --until repeats over the file's
		}
		for _, k := range []string{"max_repeats", "budget", "precision"} {
			if d.isSet("experiment." + k) {
				d.problem("experiment."+k, "only read with until = %q (add rounds until the answer is sure)", UntilConclusive)
			}
		}
		return
	}
	key := "experiment.until"
	if m.Baseline == "" && len(m.Expect) == 0 {
		d.problem(key, "until = %q needs something to decide: a baseline (each scenario against it) or an expect ordering", UntilConclusive)
	}
	if m.Order == Blocked {
		d.problem(key, "until = %q adds paired rounds (every cell once per round), which order = \"blocked\" does not run: use grouped, written or shuffled", UntilConclusive)
	}
	if m.MaxRepeats > 0 && m.MaxRepeats < m.Repeats {
		mk := "experiment.max_repeats"
		if !d.isSet(mk) {
			mk = "--max-repeats"
		}
		d.problems = append(d.problems, Problem{Key: mk, Line: d.line(mk), Msg: fmt.Sprintf("%d is fewer than repeats (%d), the rounds run before the first look", m.MaxRepeats, m.Repeats)})
	}
}

// crossover reverses the even rounds of a conclusive plan whose order is
// not shuffled (A B C, C B A, A B C, ...), and reports whether it did: every
// cell then runs as often early as late in its round, so what changes over
// a round (the host settling, a table growing, caches) falls on each side
// of a pair alike and cancels out of the decision instead of showing as a
// difference. A reversed grouped round still keeps its groups together
// (and starts with the group the round before ended with). The profiled
// twins alternate with it.
func crossover(m *Manifest, round []Cell, repeat int) bool {
	if !m.Conclusive() || m.Order == Shuffled || repeat%2 == 1 {
		return false
	}
	slices.Reverse(round)
	return true
}

// Rounds is the number of rounds of repeats the plan holds.
func (p *Plan) Rounds() int {
	n := 0
	for _, c := range p.Cells {
		n = max(n, c.Repeat)
	}
	return n
}

// WithRounds is the plan with n rounds: the same cells, in the same order
// in every round the plan has (a shuffled order keeps its seed), with the
// rounds after them appended. until = "conclusive" grows a plan one round
// at a time with it; a resumed run grows the fresh plan to the stored
// one's rounds. The durations of a rerun's cells are kept.
func (p *Plan) WithRounds(n int) (*Plan, error) {
	if p.Manifest == nil {
		return nil, fmt.Errorf("plan has no manifest to expand")
	}
	if n == p.Rounds() {
		return p, nil
	}
	m := *p.Manifest
	m.Repeats, m.Seed = n, p.Seed
	q, err := expand(&m, p.Target())
	if err != nil {
		return nil, err
	}
	q.Cached = p.Cached
	byName := map[string]Cell{}
	for _, c := range p.Cells {
		byName[c.Name] = c
	}
	for i := range q.Cells {
		c := &q.Cells[i]
		if old, ok := byName[c.Name]; ok {
			was := old.Workload.Common()
			c.Workload = c.Workload.With(func(cm *engine.Common) { cm.Time, cm.Warmup = was.Time, was.Warmup })
		}
		if i < len(p.Cells) && n > p.Rounds() && (p.Cells[i].Name != c.Name || p.Cells[i].Repeat != c.Repeat) {
			return nil, fmt.Errorf("plan with %d rounds: cell %d is %s #%d, was %s #%d", n, i+1, c.Name, c.Repeat, p.Cells[i].Name, p.Cells[i].Repeat)
		}
	}
	q.computeChanges()
	return q, nil
}

// WithDuration is the plan with every cell run from round from on
// measuring d (duration = "auto" after its first round); the rounds that
// WithRounds adds later keep it.
func (p *Plan) WithDuration(from int, d time.Duration) *Plan {
	q := *p
	q.Cells = slices.Clone(p.Cells)
	for i := range q.Cells {
		if c := &q.Cells[i]; c.Repeat >= from {
			c.Workload = c.Workload.With(func(cm *engine.Common) { cm.Time = d })
		}
	}
	return &q
}

// RoundsEstimate is what plan says of a conclusive run: the estimated time
// of the minimum rounds, of one more round, and of max_repeats rounds (or
// the budget, when it comes first).
func (p *Plan) RoundsEstimate() (least, perRound, most time.Duration, err error) {
	least = p.Estimate()
	m := p.Manifest
	if m == nil || !m.Conclusive() {
		return least, 0, least, nil
	}
	q, err := p.WithRounds(p.Rounds() + 1)
	if err != nil {
		return 0, 0, 0, err
	}
	perRound = q.Estimate() - least
	extra := max(0, m.MaxRepeats-p.Rounds())
	most = least + time.Duration(extra)*perRound
	if m.Budget > 0 && most > m.Budget {
		// The runner starts no round that would end past the budget, but
		// it always runs the minimum.
		most = max(least, m.Budget)
	}
	return least, perRound, most, nil
}

// untilText is plan's line about a conclusive run.
func (p *Plan) untilText() string {
	m := p.Manifest
	least, per, most, err := p.RoundsEstimate()
	if err != nil {
		return "until conclusive: " + err.Error()
	}
	budget := "no time budget"
	if m.Budget > 0 {
		budget = "budget " + m.Budget.String()
	}
	line := fmt.Sprintf("until conclusive: %d round(s) at least (estimated %s), then one round at a time (about %s each) until every comparison is decided; "+
		"at most %d rounds, %s: estimated at most %s; precision %g%% (no difference: the ratio's interval within %.3f..%.3f)",
		p.Rounds(), least.Round(time.Second), per.Round(time.Second), m.MaxRepeats, budget, most.Round(time.Second),
		m.Precision*100, 1/(1+m.Precision), 1+m.Precision)
	var parts []string
	for _, e := range DecisionEstimates(p.Rounds(), m.MaxRepeats, m.Precision, PlanNoise) {
		what := fmt.Sprintf("%gx", e.Ratio)
		if e.Ratio == 1 {
			what = fmt.Sprintf("no difference (within %g%%)", m.Precision*100)
		}
		if e.Rounds == 0 {
			parts = append(parts, what+" not within max_repeats")
			continue
		}
		t := least + time.Duration(e.Rounds-p.Rounds())*per
		parts = append(parts, fmt.Sprintf("%s after %d (%s)", what, e.Rounds, t.Round(time.Second)))
	}
	if m.Policy.DurationAuto {
		line += fmt.Sprintf("\nduration auto: the first round measures %s a cell, the rounds after it a length from %s to %s chosen from its noise and setup (the estimates assume %s)",
			m.Duration, MinAutoDuration, m.Policy.DurationCap, m.Duration)
	}
	return line + fmt.Sprintf("\ntime to a decision, if a round's ratio varies by %g%% (the spread summary.md reports as \"noise per round\"): %s",
		PlanNoise*100, strings.Join(parts, ", "))
}

// PlanNoise is the spread of a round's log ratio plan assumes: about what
// 3 s cells of the durability question measure on a quiet 2-core host.
const PlanNoise = 0.05

// DecisionEstimate is when the rule decides a true ratio at a noise.
type DecisionEstimate struct {
	Ratio  float64
	Rounds int // 0: not within max_repeats
}

// DecisionEstimates are the rounds after which the stopping rule's t-test
// (the part that uses the size of the differences) decides a true ratio of
// 1 (no difference within the precision), 1.2, 1.75 and 3, when every round
// measures it with the spread noise (the standard deviation of a round's
// log ratio) and the rounds come out as expected: the first look at which
// |ln ratio| √n / noise reaches the critical t (for no difference: at which
// the interval's half-width falls within the precision).
func DecisionEstimates(first, last int, precision, noise float64) []DecisionEstimate {
	rule, err := sequential.NewRule(0.05, max(1, first), max(first, last, 1))
	if err != nil || noise <= 0 {
		return nil
	}
	var out []DecisionEstimate
	for _, r := range []float64{1, 1.2, 1.75, 3} {
		e := DecisionEstimate{Ratio: r}
		for n := max(first, 2); n <= last; n++ {
			half := rule.T.Crit[n] * noise / math.Sqrt(float64(n))
			if (r == 1 && half <= math.Log1p(precision)) || (r > 1 && math.Log(r) >= half) {
				e.Rounds = n
				break
			}
		}
		out = append(out, e)
	}
	return out
}
