package sequential

import (
	"fmt"
	"math"
)

// The anytime-valid t-test: the part of the stopping rule that uses the
// size of the per-round differences, not only their signs.
//
// Model. The pairs d_1, d_2, ... (log ratios) are independent N(μ, σ²) with
// σ unknown. For the null μ = μ0 the statistic at look n is a Bayes factor
// of the one-sample t-test with Jeffreys' prior 1/σ on the scale under both
// hypotheses and a normal prior N(0, g) on the standardised effect
// (μ - μ0)/σ under the alternative (Rouder et al. 2009, with g fixed):
//
//	BF_n(g) = (1 + n g)^(-1/2) · [(1 + t²/ν) / (1 + t²/(ν (1 + n g)))]^(n/2),  ν = n - 1,
//
// t the usual t statistic of d - μ0. Because the prior on σ is the right
// Haar measure of the scale group, BF_n is a likelihood ratio of the
// maximal scale invariant (d_1/|d_1|, ..., d_n/|d_1|), whose law under the
// null does not depend on σ: BF_n is a non-negative martingale with mean 1
// under every null distribution N(μ0, σ²) (Lai 1976; Pérez-Ortiz, Lardy,
// de Heide and Grünwald 2024, "E-statistics, group invariance and anytime
// valid testing"). An average over a grid of g is a Bayes factor for the
// mixed prior, so it is a martingale too, and Ville's inequality gives
//
//	P(BF_n ≥ 1/α for some n) ≤ α
//
// whatever the looks and wherever the run stops. The grid (prior standard
// deviations of 1 to 32 per-round standard deviations) weighs small and
// very large effects alike: benchmark rounds are often far less noisy than
// the difference they measure (a 1.75x ratio with 2 % noise per round is
// 28 standard deviations), and such a difference is decided at the first
// look; among grids tried in the simulation (sequential/simulation_test.go)
// this one decided soonest on the recorded noises, by a fraction of a
// round.
//
// Inversion. BF_n is increasing in |t|, so "BF_n(μ0) < 1/α" is
// |d̄ - μ0| < c_n s/√n with c_n the |t| at which the mixture reaches 1/α
// (infinite while n is too small for it to reach 1/α at all): the shifts
// no look has rejected are the intersection of these intervals over the
// looks, a confidence sequence for μ.

// tGrid is the grid of prior variances g of the standardised effect,
// weighted equally.
var tGrid = []float64{1, 4, 16, 100, 1000}

// TEvidence is the mixture Bayes factor at n pairs (n >= 2) for the t
// statistic t: how much the data weigh against the null shift.
func TEvidence(n int, t float64) float64 {
	return math.Exp(logTEvidence(n, t))
}

func logTEvidence(n int, t float64) float64 {
	if n < 2 {
		return 0
	}
	nu := float64(n - 1)
	t2 := t * t
	logs := make([]float64, len(tGrid))
	hi := math.Inf(-1)
	for i, g := range tGrid {
		k := 1 + float64(n)*g
		logs[i] = -0.5*math.Log(k) + float64(n)/2*(math.Log1p(t2/nu)-math.Log1p(t2/(nu*k)))
		hi = math.Max(hi, logs[i])
	}
	sum := 0.0
	for _, l := range logs {
		sum += math.Exp(l - hi)
	}
	return hi + math.Log(sum/float64(len(tGrid)))
}

// TTest is the anytime-valid t-test of one level over looks up to Last.
type TTest struct {
	Alpha float64
	First int       // the first look it is asked at
	Last  int       // the last look
	Crit  []float64 // Crit[n]: the |t| at which look n rejects; +Inf when it cannot
}

// NewTTest works out the critical values c_2 .. c_last.
func NewTTest(alpha float64, first, last int) (*TTest, error) {
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("alpha %g: want a level between 0 and 1", alpha)
	}
	if first < 1 || last < first || last > MaxLooks {
		return nil, fmt.Errorf("looks %d..%d: want 1 <= first <= last <= %d", first, last, MaxLooks)
	}
	tt := &TTest{Alpha: alpha, First: first, Last: last, Crit: make([]float64, last+1)}
	target := math.Log(1 / alpha)
	for n := range tt.Crit {
		tt.Crit[n] = math.Inf(1)
		if n < 2 {
			continue
		}
		const far = 1e9
		if logTEvidence(n, far) < target {
			continue
		}
		lo, hi := 0.0, far
		for range 200 {
			mid := (lo + hi) / 2
			if logTEvidence(n, mid) < target {
				lo = mid
			} else {
				hi = mid
			}
		}
		tt.Crit[n] = hi
	}
	return tt, nil
}

// FirstDecisive is the first look, from First, at which the test can
// reject at all; 0 if none can.
func (tt *TTest) FirstDecisive() int {
	for n := max(tt.First, 2); n <= tt.Last; n++ {
		if !math.IsInf(tt.Crit[n], 1) {
			return n
		}
	}
	return 0
}

// Interval is the confidence sequence for the mean after the pairs d: the
// intersection of d̄_n ± c_n s_n/√n over the looks from First.
func (tt *TTest) Interval(d []float64) Interval {
	iv := Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
	n := min(len(d), tt.Last)
	iv.Looks = n
	sum, sumsq := 0.0, 0.0
	shift := 0.0
	if n > 0 {
		shift = d[0] // sums around the first pair, for precision
	}
	for j := 1; j <= n; j++ {
		x := d[j-1] - shift
		sum += x
		sumsq += x * x
		if j < tt.First || j < 2 || math.IsInf(tt.Crit[j], 1) {
			continue
		}
		fj := float64(j)
		mean := sum / fj
		v := math.Max(0, (sumsq-fj*mean*mean)/(fj-1))
		half := tt.Crit[j] * math.Sqrt(v/fj)
		iv.Lo = math.Max(iv.Lo, shift+mean-half)
		iv.Hi = math.Min(iv.Hi, shift+mean+half)
	}
	return iv
}
