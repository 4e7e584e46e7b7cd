package analysis

import (
	"errors"
	"math"
	"sort"

	"benchmatrix/record"
)

// The statistics below follow benchstat (reference/anchors.md §3.2): the
// summary of a cell is the median of its repeats with a distribution-free
// confidence interval from order statistics, and two sets of repeats are
// compared with the Mann-Whitney U test. The unit of replication is the
// whole run (one repeat), never a second inside it (§3.1). Everything here
// is a pure function of its inputs.

// MedianInterval is a sample median and a confidence interval for the
// population median.
type MedianInterval struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	// Lo and Hi are the order statistics that bound the interval; both are
	// NaN when OK is false.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Coverage is the interval's exact coverage (e.g. 0.96875 for n = 6 at
	// a 95 % level): order statistics cannot hit the level exactly.
	Coverage float64 `json:"coverage"`
	// OK is false when there are too few samples for an interval at the
	// requested level (fewer than 6 at 95 %).
	OK bool `json:"ok"`
}

// MedianCI returns the median of xs and a confidence interval for the
// population median at level (e.g. 0.95), from order statistics: no
// bootstrap, no distributional assumption. See MedianCIOrders.
func MedianCI(xs []float64, level float64) MedianInterval {
	mi := MedianInterval{N: len(xs), Median: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if len(xs) == 0 {
		return mi
	}
	s := sortedCopy(xs)
	mi.Median = record.Median(s)
	lo, hi, cov, ok := MedianCIOrders(len(s), level)
	if !ok {
		return mi
	}
	mi.Lo, mi.Hi, mi.Coverage, mi.OK = s[lo-1], s[hi-1], cov, true
	return mi
}

// MedianCIOrders returns the 1-based order statistics x(lo), x(hi) that
// bound a confidence interval for the median of n samples at level, and the
// interval's exact coverage.
//
// The number of samples below the population median is Binomial(n, 1/2),
// so [x(l), x(n+1-l)] covers the median with probability
// P(l <= B <= n-l). The interval is the narrowest symmetric one whose
// coverage is at least level (the classic table: n = 6 → x(1), x(6),
// 96.9 %; n = 10 → x(2), x(9), 97.9 %; n = 20 → x(6), x(15), 95.9 %).
// ok is false when even [min, max] falls short, which at 95 % means n < 6.
func MedianCIOrders(n int, level float64) (lo, hi int, coverage float64, ok bool) {
	if n < 1 || !(level > 0 && level < 1) {
		return 0, 0, 0, false
	}
	// coverage(l) = 1 - 2*P(B <= l-1); it shrinks as l grows.
	tail := 0.0 // P(B <= l-1)
	best := 0
	for l := 1; l <= (n+1)/2; l++ {
		tail += binomHalfPMF(n, l-1)
		c := 1 - 2*tail
		if c < level {
			break
		}
		best, coverage = l, c
	}
	if best == 0 {
		return 0, 0, 0, false
	}
	return best, n + 1 - best, coverage, true
}

// MinSamplesForCI is the smallest number of samples that gives a median
// confidence interval at level (6 at 95 %).
func MinSamplesForCI(level float64) int {
	for n := 1; n <= 1000; n++ {
		if _, _, _, ok := MedianCIOrders(n, level); ok {
			return n
		}
	}
	return 0
}

// binomHalfPMF is P(B = k) for B ~ Binomial(n, 1/2), computed in logs so
// that large n neither overflows nor underflows.
func binomHalfPMF(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	ln := lgamma(n+1) - lgamma(k+1) - lgamma(n-k+1) - float64(n)*math.Ln2
	return math.Exp(ln)
}

func lgamma(x int) float64 {
	v, _ := math.Lgamma(float64(x))
	return v
}

// Mean is the arithmetic mean of xs; NaN for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// StdDev is the sample standard deviation of xs (n-1 in the denominator);
// NaN for fewer than two values.
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// CoV is the coefficient of variation of xs in percent: the sample
// standard deviation over the mean. NaN for fewer than two values or a
// zero mean.
func CoV(xs []float64) float64 {
	m := Mean(xs)
	if m == 0 || math.IsNaN(m) {
		return math.NaN()
	}
	return StdDev(xs) / math.Abs(m) * 100
}

// UTest is the outcome of a two-sided Mann-Whitney U test.
type UTest struct {
	N1, N2 int
	// U is U1, the number of pairs (x from the first sample, y from the
	// second) with x > y, ties counting one half. U2 = N1*N2 - U.
	U float64
	// P is the two-sided p-value: the probability, if both samples came
	// from one distribution, of a U at least as far from N1*N2/2.
	P float64
	// Exact tells whether P comes from the exact distribution of U (no
	// ties, both samples of at most MannWhitneyExactMax) or from the normal
	// approximation with tie and continuity correction.
	Exact bool
}

// MannWhitneyExactMax is the largest sample size for which the exact
// distribution of U is used (when there are no ties).
const MannWhitneyExactMax = 50

// ErrEmptySample is returned by MannWhitneyU when a sample is empty.
var ErrEmptySample = errors.New("mann-whitney u: empty sample")

// MannWhitneyU runs the two-sided Mann-Whitney U (Wilcoxon rank-sum) test
// on x and y. When every value is the same the samples cannot differ and P
// is 1. NaN values are not meaningful input.
func MannWhitneyU(x, y []float64) (UTest, error) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return UTest{N1: n1, N2: n2, P: 1}, ErrEmptySample
	}
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].v < all[j].v })

	// Rank sum of x with mid-ranks for ties; tieTerm is Σ(t³ - t) over the
	// groups of tied values.
	r1, tieTerm, ties := 0.0, 0.0, false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		t := float64(j - i)
		mid := float64(i+1+j) / 2 // ranks i+1 .. j
		for k := i; k < j; k++ {
			if all[k].first {
				r1 += mid
			}
		}
		if j-i > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	u1 := r1 - float64(n1*(n1+1))/2
	res := UTest{N1: n1, N2: n2, U: u1}
	mn := float64(n1) * float64(n2)

	if !ties && n1 <= MannWhitneyExactMax && n2 <= MannWhitneyExactMax {
		small := int(math.Round(math.Min(u1, mn-u1)))
		res.P = math.Min(1, 2*uExactCDF(n1, n2, small))
		res.Exact = true
		return res, nil
	}
	n := float64(n1 + n2)
	variance := mn / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if variance <= 0 {
		res.P = 1 // every value equal
		return res, nil
	}
	d := math.Abs(u1-mn/2) - 0.5 // continuity correction
	if d < 0 {
		d = 0
	}
	z := d / math.Sqrt(variance)
	res.P = math.Min(1, math.Erfc(z/math.Sqrt2))
	return res, nil
}

// uExactCDF is P(U <= u) for samples of m and n values without ties when
// both come from one distribution. It uses the recurrence on the largest of
// the m+n values: it belongs to the first sample with probability m/(m+n)
// and then beats all n values of the second,
//
//	P[m,n](u) = m/(m+n) P[m-1,n](u-n) + n/(m+n) P[m,n-1](u),
//
// in probabilities rather than counts, so nothing overflows.
func uExactCDF(m, n, u int) float64 {
	if u < 0 {
		return 0
	}
	if u >= m*n {
		return 1
	}
	width := u + 1 // only P(U = 0..u) is ever needed
	// prev[j] and cur[j] hold the distribution for (i-1, j) and (i, j).
	prev := make([][]float64, n+1)
	cur := make([][]float64, n+1)
	for j := range prev {
		prev[j] = make([]float64, width)
		cur[j] = make([]float64, width)
		prev[j][0] = 1 // i = 0: U is 0
	}
	for i := 1; i <= m; i++ {
		clear(cur[0])
		cur[0][0] = 1 // j = 0: U is 0
		for j := 1; j <= n; j++ {
			a := float64(i) / float64(i+j)
			b := float64(j) / float64(i+j)
			for k := 0; k < width; k++ {
				v := b * cur[j-1][k]
				if k >= j {
					v += a * prev[j][k-j]
				}
				cur[j][k] = v
			}
		}
		prev, cur = cur, prev
	}
	sum := 0.0
	for _, p := range prev[n] {
		sum += p
	}
	return math.Min(1, sum)
}

// UTestMinP is the smallest two-sided p-value the U test can give with n1
// and n2 samples (complete separation): 2 / C(n1+n2, n1). With 3 repeats
// each it is 0.1, so no difference can be significant at 0.05; with 4 each
// it is 0.029.
func UTestMinP(n1, n2 int) float64 {
	if n1 < 1 || n2 < 1 {
		return 1
	}
	lnC := lgamma(n1+n2+1) - lgamma(n1+1) - lgamma(n2+1)
	return math.Min(1, 2*math.Exp(-lnC))
}

// MinRepeatsToDetect is the smallest n such that n repeats on each side
// can give p < alpha (4 at 0.05).
func MinRepeatsToDetect(alpha float64) int {
	for n := 1; n <= 1000; n++ {
		if UTestMinP(n, n) < alpha {
			return n
		}
	}
	return 0
}

func sortedCopy(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s
}
