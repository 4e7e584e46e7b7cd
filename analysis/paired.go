package analysis

import (
	"math"
	"sort"

	"benchmatrix/record"
)

// Paired statistics: the cells of one run are measured in interleaved
// rounds (A B C, A B C, ...), so the repeats of two scenarios pair by round,
// and what drifts over the run (a busy neighbour, a warming cache) falls on
// both sides of a pair. A scenario's effect is then the per-round log ratio
// d = ln(x_scenario / x_baseline); the tests below are about those d:
//
//   - the Wilcoxon signed-rank test of "the d are symmetric about 0", exact
//     for up to SignedRankExactMax pairs without ties, else the normal
//     approximation with tie and continuity corrections (as R's
//     wilcox.test(paired = TRUE) does);
//   - the Hodges-Lehmann estimate of the shift (the median of the Walsh
//     averages (d_i + d_j)/2, i <= j) and its distribution-free confidence
//     interval [A(k), A(M+1-k)] from the same signed-rank distribution
//     (Hollander & Wolfe §3.2): with 6 pairs it is [min d, max d] at
//     96.9 %, with 5 or fewer no 95 % interval exists.
//
// Exponentiated, the estimate and its interval are a ratio ("2.03x, 95% CI
// 1.91-2.15"). All pure functions of their inputs.

// SignedRankExactMax is the largest number of non-zero differences for
// which the exact distribution of the signed-rank statistic is used.
const SignedRankExactMax = 50

// SignedRank is the outcome of a two-sided Wilcoxon signed-rank test.
type SignedRank struct {
	N     int     // non-zero differences used by the test
	Zeros int     // differences equal to 0, left out
	W     float64 // W+, the sum of the ranks of the positive differences
	P     float64 // two-sided p-value; 1 with no non-zero difference
	Exact bool    // P from the exact distribution (no ties, N <= SignedRankExactMax)
}

// WilcoxonSignedRank tests whether the differences d are symmetric about
// zero. Zeros are dropped (Wilcoxon's convention); tied absolute values get
// mid-ranks.
func WilcoxonSignedRank(d []float64) SignedRank {
	var nz []float64
	res := SignedRank{P: 1}
	for _, v := range d {
		if v == 0 {
			res.Zeros++
			continue
		}
		nz = append(nz, v)
	}
	n := len(nz)
	res.N = n
	if n == 0 {
		return res
	}
	abs := make([]float64, n)
	for i, v := range nz {
		abs[i] = math.Abs(v)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return abs[idx[a]] < abs[idx[b]] })
	ties, tieTerm := false, 0.0
	for i := 0; i < n; {
		j := i
		for j < n && abs[idx[j]] == abs[idx[i]] {
			j++
		}
		mid := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			if nz[idx[k]] > 0 {
				res.W += mid
			}
		}
		if t := float64(j - i); j-i > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	if !ties && n <= SignedRankExactMax {
		dist := signedRankDist(n)
		w := int(math.Round(res.W))
		lo, hi := 0.0, 0.0 // P(W <= w), P(W >= w)
		for k, p := range dist {
			if k <= w {
				lo += p
			}
			if k >= w {
				hi += p
			}
		}
		res.P = math.Min(1, 2*math.Min(lo, hi))
		res.Exact = true
		return res
	}
	fn := float64(n)
	mean := fn * (fn + 1) / 4
	variance := fn*(fn+1)*(2*fn+1)/24 - tieTerm/48
	if variance <= 0 {
		return res
	}
	z := math.Max(math.Abs(res.W-mean)-0.5, 0) / math.Sqrt(variance)
	res.P = math.Min(1, math.Erfc(z/math.Sqrt2))
	return res
}

// signedRankDist is P(W+ = k), k = 0..n(n+1)/2, for n differences without
// ties under the null: each rank is positive with probability 1/2, so the
// counts are those of the subsets of {1..n} by their sum.
func signedRankDist(n int) []float64 {
	m := n * (n + 1) / 2
	p := make([]float64, m+1)
	p[0] = 1
	top := 0
	for r := 1; r <= n; r++ {
		top += r
		for k := top; k >= 0; k-- {
			v := p[k] / 2
			if k >= r {
				v += p[k-r] / 2
			}
			p[k] = v
		}
	}
	return p
}

// SignedRankCIOrder returns k, the 1-based order of the Walsh average that
// bounds the distribution-free confidence interval [A(k), A(M+1-k)] for
// the centre of n paired differences at level, and its exact coverage
// 1 - 2 P(W+ <= k-1). ok is false when even [A(1), A(M)] falls short
// (n < 6 at 95 %).
func SignedRankCIOrder(n int, level float64) (k int, coverage float64, ok bool) {
	if n < 1 || !(level > 0 && level < 1) || n > 1000 {
		return 0, 0, false
	}
	var dist []float64
	if n <= 200 {
		dist = signedRankDist(n)
	}
	cdf := 0.0 // P(W <= k-1)
	for kk := 1; ; kk++ {
		if dist != nil {
			cdf += dist[kk-1]
		} else {
			// Normal approximation for large n.
			fn := float64(n)
			mean, sd := fn*(fn+1)/4, math.Sqrt(fn*(fn+1)*(2*fn+1)/24)
			cdf = 0.5 * math.Erfc(-((float64(kk-1)+0.5)-mean)/sd/math.Sqrt2)
		}
		c := 1 - 2*cdf
		if c < level {
			break
		}
		k, coverage = kk, c
	}
	return k, coverage, k > 0
}

// ShiftInterval is the Hodges-Lehmann estimate of the centre of paired
// differences with its confidence interval.
type ShiftInterval struct {
	N        int
	Estimate float64 // median of the Walsh averages
	Lo, Hi   float64 // NaN when OK is false
	Coverage float64
	OK       bool
}

// HodgesLehmann returns the median of the Walsh averages of d and the
// distribution-free interval [A(k), A(M+1-k)] at level.
func HodgesLehmann(d []float64, level float64) ShiftInterval {
	n := len(d)
	si := ShiftInterval{N: n, Estimate: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if n == 0 {
		return si
	}
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	sort.Float64s(walsh)
	si.Estimate = record.Median(walsh)
	k, cov, ok := SignedRankCIOrder(n, level)
	if !ok {
		return si
	}
	si.Lo, si.Hi, si.Coverage, si.OK = walsh[k-1], walsh[len(walsh)-k], cov, true
	return si
}

// PairedRatio is x/y estimated from paired rounds: the exponentiated
// Hodges-Lehmann estimate of the per-round log ratios with its interval,
// the signed-rank p, and in how many rounds x was above y.
type PairedRatio struct {
	Rounds   int     `json:"rounds"`
	Ratio    float64 `json:"ratio"`
	Lo       float64 `json:"ci_lo"` // NaN when CIOK is false
	Hi       float64 `json:"ci_hi"`
	Coverage float64 `json:"coverage"`
	CIOK     bool    `json:"ci_ok"`
	P        float64 `json:"p"`
	Exact    bool    `json:"exact"`
	Above    int     `json:"above"` // rounds with x > y
}

// RatioFromPairs computes the paired ratio x/y; pairs with a value <= 0 or
// not finite on either side are left out.
func RatioFromPairs(x, y []float64) PairedRatio {
	var d []float64
	above := 0
	for i := range x {
		if i >= len(y) || !(x[i] > 0) || !(y[i] > 0) || math.IsInf(x[i], 0) || math.IsInf(y[i], 0) {
			continue
		}
		d = append(d, math.Log(x[i]/y[i]))
		if x[i] > y[i] {
			above++
		}
	}
	pr := PairedRatio{Rounds: len(d), Above: above, Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: 1}
	if len(d) == 0 {
		return pr
	}
	hl := HodgesLehmann(d, Confidence)
	pr.Ratio = math.Exp(hl.Estimate)
	if hl.OK {
		pr.Lo, pr.Hi, pr.Coverage, pr.CIOK = math.Exp(hl.Lo), math.Exp(hl.Hi), hl.Coverage, true
	}
	sr := WilcoxonSignedRank(d)
	pr.P, pr.Exact = sr.P, sr.Exact
	return pr
}

// MinRoundsForRatioCI is the number of paired rounds a 95 % interval of a
// ratio needs (6).
func MinRoundsForRatioCI() int {
	for n := 1; n < 100; n++ {
		if _, _, ok := SignedRankCIOrder(n, Confidence); ok {
			return n
		}
	}
	return 0
}

// Trend is the outcome of the Mann-Kendall test for a monotonic trend of a
// series over its order (here: a cell's repeats in the order they ran).
type Trend struct {
	N     int
	S     int     // Σ sign(x_j - x_i), i < j
	Tau   float64 // Kendall's tau: S / (n(n-1)/2)
	P     float64 // two-sided
	Exact bool    // from the exact permutation distribution (no ties, n <= 50)
}

// MannKendall tests xs (in time order) for a monotonic trend. With no ties
// and up to 50 values the p-value is exact: under the null every order is
// equally likely and S = M - 2I where I is the number of inversions, whose
// distribution is the Mahonian numbers. Otherwise the normal approximation
// with the tie-corrected variance and a continuity correction.
func MannKendall(xs []float64) Trend {
	n := len(xs)
	tr := Trend{N: n, P: 1}
	if n < 2 {
		return tr
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			switch {
			case xs[j] > xs[i]:
				tr.S++
			case xs[j] < xs[i]:
				tr.S--
			}
		}
	}
	pairs := n * (n - 1) / 2
	tr.Tau = float64(tr.S) / float64(pairs)
	s := sortedCopy(xs)
	tieTerm := 0.0
	ties := false
	for i := 0; i < n; {
		j := i
		for j < n && s[j] == s[i] {
			j++
		}
		if t := float64(j - i); j-i > 1 {
			ties = true
			tieTerm += t * (t - 1) * (2*t + 5)
		}
		i = j
	}
	if !ties && n <= 50 {
		// Inversions I = (pairs - S)/2; P(|S| >= |s|) = 2 P(I <= (pairs-|s|)/2).
		dist := inversionDist(n)
		lim := (pairs - abs(tr.S)) / 2
		c := 0.0
		for k := 0; k <= lim; k++ {
			c += dist[k]
		}
		tr.P, tr.Exact = math.Min(1, 2*c), true
		if tr.S == 0 {
			tr.P = 1
		}
		return tr
	}
	fn := float64(n)
	variance := (fn*(fn-1)*(2*fn+5) - tieTerm) / 18
	if variance <= 0 {
		return tr
	}
	z := math.Max(math.Abs(float64(tr.S))-1, 0) / math.Sqrt(variance)
	tr.P = math.Min(1, math.Erfc(z/math.Sqrt2))
	return tr
}

// inversionDist is P(I = k) for the inversions of a uniformly random
// permutation of n items, k = 0..n(n-1)/2.
func inversionDist(n int) []float64 {
	m := n * (n - 1) / 2
	p := make([]float64, m+1)
	p[0] = 1
	top := 0
	for i := 2; i <= n; i++ {
		// The i-th item adds 0..i-1 inversions, each with probability 1/i.
		next := make([]float64, m+1)
		for k := 0; k <= top; k++ {
			if p[k] == 0 {
				continue
			}
			for a := 0; a < i; a++ {
				next[k+a] += p[k] / float64(i)
			}
		}
		top += i - 1
		p = next
	}
	return p
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
