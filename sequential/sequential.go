// Package sequential decides a paired comparison round by round, so that a
// run can stop as soon as its answer is sure without the repeated looks
// inflating its false positives.
//
// A conclusive run decides with a Rule (rule.go): this sign test and an
// anytime-valid t-test (ttest.go), each at half the level. The sign test
// below is the part that holds for any distribution.
//
// The sign test is a group-sequential exact sign test on the per-round log
// ratios d_1, d_2, ... of two cells measured in the same rounds, inverted
// into a confidence sequence:
//
//   - Looks. The test looks after every pair from the first look (the
//     minimum rounds) to the last (max_repeats). At look n it counts S_n,
//     the pairs with d_i above the tested shift δ.
//   - Null. Under "the median of d is δ" with independent rounds, every d_i
//     is above δ with probability 1/2 whatever its distribution (skewed,
//     heavy-tailed, drifting between rounds: the pairing carries a common
//     drift to both sides), so S_1, S_2, ... is a fair ±1 random walk. This
//     is the sign-flip (permutation) test with equal scores; its joint null
//     distribution over all looks is exact and the same for any data.
//   - Alpha spending. The two-sided boundary b_n on |2 S_n - n| is set by a
//     Lan-DeMets spending function α(t), t = n / max looks, computed exactly
//     on that random walk: the paths that crossed an earlier boundary are
//     removed, and b_n is the smallest boundary whose crossing probability
//     at look n is within α(t_n) minus what the earlier looks spent
//     (discreteness leaves some unspent; later looks may use it). Whatever
//     the looks, P(any crossing up to the last look) <= α: a decision taken
//     at any look, stopping there, keeps its level (optional stopping).
//   - Confidence sequence. Inverting the test at every shift δ gives, at
//     look k, the shifts no look j <= k has rejected. For the sign test that
//     set is an interval of order statistics at each look, so the sequence
//     is the intersection of [x_(j-q_j+1), x_(q_j)] over the looks j <= k
//     (x sorted among the first j, q_j = ceil((j + b_j) / 2)). It covers the
//     true median at every look at once with probability >= 1 - α, and it
//     only ever narrows.
//
// A comparison is decided when the interval excludes 0 (significant:
// faster or slower) or lies within [-ln(1+precision), ln(1+precision)]
// (equivalent within precision): both events have probability <= α when
// they are false, at whatever look the run stops. Pure functions of their
// inputs.
package sequential

import (
	"fmt"
	"math"
	"sort"
)

// Spending is a Lan-DeMets alpha-spending function: how much of α the
// looks up to the fraction t of the last look may spend together.
type Spending string

// The spending functions.
const (
	// Pocock spends evenly in ln(1 + (e-1)t): early looks can stop a run
	// with a clear answer. The default.
	Pocock Spending = "pocock"
	// OBrienFleming spends 2 - 2Φ(z_{α/2}/√t): almost nothing early, nearly
	// all of α at the last look.
	OBrienFleming Spending = "obrien-fleming"
)

// Spent is α(t): the type I error the looks up to fraction t may spend.
func (s Spending) Spent(alpha, t float64) float64 {
	switch {
	case t <= 0:
		return 0
	case t >= 1:
		return alpha
	}
	switch s {
	case OBrienFleming:
		z := normalQuantile(1 - alpha/2)
		return math.Erfc(z / math.Sqrt(t) / math.Sqrt2)
	default:
		return alpha * math.Log(1+(math.E-1)*t)
	}
}

// MaxLooks bounds the last look; the boundaries take O(MaxLooks²).
const MaxLooks = 1000

// Design is one sequential test: its level, its looks and its spending.
type Design struct {
	Alpha    float64  // two-sided level of the whole sequence, e.g. 0.05
	First    int      // the first look, in pairs (the minimum rounds), >= 1
	Last     int      // the last look (max_repeats)
	Spending Spending // "" means Pocock
}

// Validate says what is wrong with a design.
func (d Design) Validate() error {
	switch {
	case !(d.Alpha > 0 && d.Alpha < 1):
		return fmt.Errorf("alpha %g: want a level between 0 and 1", d.Alpha)
	case d.First < 1:
		return fmt.Errorf("first look %d: want at least 1 pair", d.First)
	case d.Last < d.First:
		return fmt.Errorf("last look %d is before the first (%d)", d.Last, d.First)
	case d.Last > MaxLooks:
		return fmt.Errorf("last look %d: at most %d", d.Last, MaxLooks)
	case d.Spending != "" && d.Spending != Pocock && d.Spending != OBrienFleming:
		return fmt.Errorf("spending %q: want %s or %s", d.Spending, Pocock, OBrienFleming)
	}
	return nil
}

// Boundaries are a design's critical values: at look n (First <= n <=
// Last) the test rejects when |2 S_n - n| >= B[n]; B[n] > n means that
// look cannot reject. Spent[n] is the exact null probability of a first
// crossing at look n or before.
type Boundaries struct {
	Design Design
	B      []int     // indexed by n, 0..Last; 0 below First
	Spent  []float64 // indexed by n
}

// Compute works the boundaries out on the null random walk.
func (d Design) Compute() (*Boundaries, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if d.Spending == "" {
		d.Spending = Pocock
	}
	bd := &Boundaries{Design: d, B: make([]int, d.Last+1), Spent: make([]float64, d.Last+1)}
	// p[s] is the probability of s pairs above among n, on the paths that
	// have not crossed a boundary yet.
	p := []float64{1}
	spent := 0.0
	for n := 1; n <= d.Last; n++ {
		next := make([]float64, n+1)
		for s, v := range p {
			next[s] += v / 2
			next[s+1] += v / 2
		}
		p = next
		if n < d.First {
			continue
		}
		allowed := d.Spending.Spent(d.Alpha, float64(n)/float64(d.Last)) - spent
		// mass[c] for the distance c = |2s - n| from the centre: the
		// smallest c whose tail mass (>= c) fits in allowed.
		b := n + 1
		tail := 0.0
		for c := n; c >= 1; c-- {
			if (n-c)%2 != 0 {
				continue
			}
			m := p[(n+c)/2]
			if c > 0 {
				m += p[(n-c)/2]
			}
			if tail+m > allowed*(1+1e-12) {
				break
			}
			tail += m
			b = c
		}
		bd.B[n] = b
		if b <= n {
			for s := range p {
				if c := abs(2*s - n); c >= b {
					p[s] = 0
				}
			}
		}
		spent += tail
		bd.Spent[n] = spent
	}
	return bd, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Interval is the confidence sequence at a look: the shifts of the median
// log ratio that no look so far rejected. Lo is -Inf or Hi +Inf while the
// looks cannot bound that side yet.
type Interval struct {
	Lo, Hi float64
	Looks  int // the pairs it is computed from
}

// Contains reports whether the interval holds x.
func (iv Interval) Contains(x float64) bool { return iv.Lo <= x && x <= iv.Hi }

// Interval is the confidence sequence after the pairs d (in the order they
// were measured; pairs beyond Last are not looked at).
func (bd *Boundaries) Interval(d []float64) Interval {
	iv := Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
	n := min(len(d), bd.Design.Last)
	iv.Looks = n
	sorted := make([]float64, 0, n)
	for j := 1; j <= n; j++ {
		// Insert d[j-1], keeping the prefix sorted.
		x := d[j-1]
		i := sort.SearchFloat64s(sorted, x)
		sorted = append(sorted, 0)
		copy(sorted[i+1:], sorted[i:])
		sorted[i] = x
		if j < bd.Design.First || bd.B[j] > j {
			continue
		}
		q := (j + bd.B[j] + 1) / 2 // ceil((j + b) / 2)
		lo, hi := sorted[j-q], sorted[q-1]
		iv.Lo = math.Max(iv.Lo, lo)
		iv.Hi = math.Min(iv.Hi, hi)
	}
	if iv.Lo > iv.Hi {
		// Only possible with the data contradicting itself across looks
		// (the median moved by more than the interval allows): no shift
		// survives. Keep the narrowest honest statement: the last look's.
		iv.Lo, iv.Hi = iv.Hi, iv.Lo
	}
	return iv
}

// Outcome of a comparison at a look.
type Outcome string

// The outcomes.
const (
	Undecided  Outcome = "undecided"
	Higher     Outcome = "higher"     // the median log ratio is above 0, significantly
	Lower      Outcome = "lower"      // below 0, significantly
	Equivalent Outcome = "equivalent" // within ±ln(1+precision)
)

// Decided reports whether the outcome answers the comparison.
func (o Outcome) Decided() bool { return o != Undecided && o != "" }

// Decision is a comparison's state after some pairs.
type Decision struct {
	Outcome  Outcome
	Interval Interval // of the median log ratio
	// Within is true when the interval lies within the precision, also
	// when the difference is significant (a small, sure difference).
	Within bool
	// A Rule's decision: each test's own sequence, which of them decided
	// (BySign, ByT, ByBoth; "" while undecided), and Conflict when the two
	// sequences do not meet.
	Sign, T  Interval
	By       string
	Conflict bool
}

// Decide decides the pairs d (log ratios) against no difference and
// against the precision (e.g. 0.05: within 1/1.05 .. 1.05).
func (bd *Boundaries) Decide(d []float64, precision float64) Decision {
	iv := bd.Interval(d)
	e := math.Log1p(precision)
	dec := Decision{Outcome: Undecided, Interval: iv, Within: iv.Lo >= -e && iv.Hi <= e}
	switch {
	case iv.Lo > 0:
		dec.Outcome = Higher
	case iv.Hi < 0:
		dec.Outcome = Lower
	case dec.Within:
		dec.Outcome = Equivalent
	}
	return dec
}

// FirstDecisive is the smallest number of pairs at which a decision is
// possible at all: all pairs of one sign reach the boundary.
func (bd *Boundaries) FirstDecisive() int {
	for n := bd.Design.First; n <= bd.Design.Last; n++ {
		if bd.B[n] <= n {
			return n
		}
	}
	return 0
}

// normalQuantile is Φ⁻¹(p) by bisection on erfc (p in (0, 1)); it is only
// used to set up a design.
func normalQuantile(p float64) float64 {
	lo, hi := -40.0, 40.0
	for range 200 {
		mid := (lo + hi) / 2
		if 0.5*math.Erfc(-mid/math.Sqrt2) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
