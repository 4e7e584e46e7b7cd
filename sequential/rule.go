package sequential

import (
	"math"
)

// Rule is the stopping rule of a conclusive run: the exact sign test (its
// confidence sequence for the median log ratio) and the anytime-valid
// t-test (for the mean), each at half the level, read together.
//
// Why two. The sign test holds for any distribution of the pairs (skewed,
// heavy-tailed, with outlying rounds) but uses only their signs, so even
// the largest difference needs about seven rounds before all-one-sign is
// rare enough. The t-test uses the size of the differences, so a large,
// consistent difference is decided at the first look, but it assumes
// normal pairs; a stalled round inflates its variance and silences it,
// which leaves the sign test to decide. Splitting α between them keeps the
// whole rule's level: when the pairs are symmetric about their centre (as
// a paired comparison without a difference is, the order of the two cells
// being balanced over the rounds), the median and the mean coincide, each
// sequence misses it with probability at most α/2 at any look, and the
// intersection misses it with probability at most α (Bonferroni), however
// many times the run looks and wherever it stops.
type Rule struct {
	Alpha float64
	Sign  *Boundaries
	T     *TTest
}

// NewRule sets up the rule at level alpha over looks first..last.
func NewRule(alpha float64, first, last int) (*Rule, error) {
	sign, err := Design{Alpha: alpha * SignShare, First: first, Last: last}.Compute()
	if err != nil {
		return nil, err
	}
	t, err := NewTTest(alpha*(1-SignShare), first, last)
	if err != nil {
		return nil, err
	}
	return &Rule{Alpha: alpha, Sign: sign, T: t}, nil
}

// FirstDecisive is the first look at which a decision is possible: the
// t-test's, for a clear difference.
func (r *Rule) FirstDecisive() int {
	a, b := r.Sign.FirstDecisive(), r.T.FirstDecisive()
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// SignShare is the part of α the sign test spends; the t-test spends the
// rest.
const SignShare = 0.5

// Which test bounded an interval.
const (
	BySign = "sign"
	ByT    = "t"
	ByBoth = "sign+t"
)

// Decide decides the pairs d (log ratios) against no difference and
// against the precision: the interval is the intersection of the two
// sequences. When they do not meet, one of them has missed (an outlying
// round drags the mean's; a skew sets the median and the mean apart) and
// the sign test's interval decides alone. The level holds either way: a
// wrong decision needs an interval that misses the true shift, and when
// both cover it the intersection and each of them do.
func (r *Rule) Decide(d []float64, precision float64) Decision {
	s, t := r.Sign.Interval(d), r.T.Interval(d)
	iv := Interval{Lo: math.Max(s.Lo, t.Lo), Hi: math.Min(s.Hi, t.Hi), Looks: s.Looks}
	e := math.Log1p(precision)
	dec := Decision{Outcome: Undecided, Sign: s, T: t}
	if iv.Lo > iv.Hi {
		// Both cannot hold: the mean's sequence is the one an outlying
		// round moves, so the sign test's stands alone.
		iv, dec.Conflict = s, true
	}
	dec.Interval = iv
	dec.Within = iv.Lo >= -e && iv.Hi <= e
	switch {
	case iv.Lo > 0:
		dec.Outcome = Higher
	case iv.Hi < 0:
		dec.Outcome = Lower
	case dec.Within:
		dec.Outcome = Equivalent
	}
	if dec.Outcome.Decided() {
		dec.By = decidedBy(dec.Outcome, s, t, e)
	}
	return dec
}

// decidedBy names the test(s) whose interval alone would have decided the
// outcome.
func decidedBy(o Outcome, s, t Interval, e float64) string {
	alone := func(iv Interval) bool {
		switch o {
		case Higher:
			return iv.Lo > 0
		case Lower:
			return iv.Hi < 0
		}
		return iv.Lo >= -e && iv.Hi <= e
	}
	switch a, b := alone(s), alone(t); {
	case a && b:
		return ByBoth
	case a:
		return BySign
	case b:
		return ByT
	}
	return ByBoth // only their intersection decides
}
