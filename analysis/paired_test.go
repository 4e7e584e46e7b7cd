package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// R's own example for wilcox.test (Hollander & Wolfe p. 29, depression
// scale before and after therapy): wilcox.test(x, y, paired = TRUE,
// alternative = "greater") gives V = 40, p-value = 0.01953; two-sided is
// twice that, 0.0390625 (= 20/512).
func TestWilcoxonSignedRankHollanderWolfe(t *testing.T) {
	t.Parallel()
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	got := WilcoxonSignedRank(d)
	if got.W != 40 || !got.Exact || !near(got.P, 20.0/512, 1e-12) || got.N != 9 {
		t.Errorf("got %+v, want W=40, exact p=0.0390625", got)
	}
}

// bruteSignedRank is the reference: every one of the 2^n sign patterns of
// the ranks 1..n, counted.
func bruteSignedRank(n int) []float64 {
	m := n * (n + 1) / 2
	p := make([]float64, m+1)
	for mask := 0; mask < 1<<n; mask++ {
		s := 0
		for r := 1; r <= n; r++ {
			if mask&(1<<(r-1)) != 0 {
				s += r
			}
		}
		p[s] += 1 / float64(int(1)<<n)
	}
	return p
}

func TestSignedRankDistMatchesEnumeration(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 12; n++ {
		got, want := signedRankDist(n), bruteSignedRank(n)
		for k := range want {
			if !near(got[k], want[k], 1e-15) {
				t.Fatalf("n=%d: P(W=%d) = %v, enumeration %v", n, k, got[k], want[k])
			}
		}
	}
}

// The classic table of two-sided 5 % critical values of the signed-rank
// statistic (reject when W <= T): n=6 T=0, n=7 T=2, n=8 T=3, n=10 T=8,
// n=15 T=25, n=20 T=52. The interval's order is k = T+1.
func TestSignedRankCIOrderTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		n, k     int
		coverage float64
	}{
		{6, 1, 1 - 2.0/64},
		{7, 3, 1 - 2*3.0/128},
		{8, 4, 1 - 2*5.0/256},
		{10, 9, 1 - 2*25.0/1024},
		{15, 26, 0},
		{20, 53, 0},
	}
	for _, c := range cases {
		k, cov, ok := SignedRankCIOrder(c.n, 0.95)
		if !ok || k != c.k || (c.coverage > 0 && !near(cov, c.coverage, 1e-12)) {
			t.Errorf("n=%d: k=%d coverage %.5f ok=%v, want k=%d coverage %.5f", c.n, k, cov, ok, c.k, c.coverage)
		}
	}
	if _, _, ok := SignedRankCIOrder(5, 0.95); ok {
		t.Error("n=5 gave a 95% interval; none exists (the best is 93.75%)")
	}
	if got := MinRoundsForRatioCI(); got != 6 {
		t.Errorf("MinRoundsForRatioCI = %d, want 6", got)
	}
}

func TestHodgesLehmann(t *testing.T) {
	t.Parallel()
	// Walsh averages of 1,2,3: 1, 1.5, 2, 2, 2.5, 3 → median 2.
	if got := HodgesLehmann([]float64{3, 1, 2}, 0.95); got.Estimate != 2 || got.OK {
		t.Errorf("HL(1,2,3) = %+v, want 2 without an interval", got)
	}
	// n = 6: the 95 % interval is [min, max] of the data.
	d := []float64{0.1, 0.3, 0.2, 0.5, 0.4, 0.25}
	got := HodgesLehmann(d, 0.95)
	if !got.OK || got.Lo != 0.1 || got.Hi != 0.5 || !near(got.Coverage, 62.0/64, 1e-12) {
		t.Errorf("HL n=6 = %+v, want [0.1, 0.5] at 96.9%%", got)
	}
}

// The interval's coverage, checked by simulation: symmetric noise around a
// known shift must fall inside at least the stated coverage (within the
// simulation's error).
func TestHodgesLehmannCoverage(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	const trials, shift = 4000, 0.3
	for _, n := range []int{6, 10} {
		in := 0
		var cov float64
		for range trials {
			d := make([]float64, n)
			for i := range d {
				d[i] = shift + rng.NormFloat64()*0.1
			}
			si := HodgesLehmann(d, 0.95)
			cov = si.Coverage
			if si.Lo <= shift && shift <= si.Hi {
				in++
			}
		}
		if got := float64(in) / trials; got < cov-0.015 {
			t.Errorf("n=%d: covered %.3f of the time, stated %.3f", n, got, cov)
		}
	}
}

func TestRatioFromPairs(t *testing.T) {
	t.Parallel()
	y := []float64{1000, 1100, 950, 1020, 980, 1050}
	x := []float64{2010, 2190, 1930, 2050, 1950, 2120} // about 2x, every round
	pr := RatioFromPairs(x, y)
	if pr.Rounds != 6 || pr.Above != 6 || !pr.CIOK || !pr.Exact || !near(pr.P, 2.0/64, 1e-12) {
		t.Fatalf("got %+v", pr)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range x {
		lo, hi = math.Min(lo, x[i]/y[i]), math.Max(hi, x[i]/y[i])
	}
	if !near(pr.Lo, lo, 1e-12) || !near(pr.Hi, hi, 1e-12) || pr.Ratio < lo || pr.Ratio > hi {
		t.Errorf("ratio %.4f [%.4f, %.4f], want within and bounded by [%.4f, %.4f]", pr.Ratio, pr.Lo, pr.Hi, lo, hi)
	}
	// Three rounds: an estimate, no interval, p at best 0.25.
	pr = RatioFromPairs(x[:3], y[:3])
	if pr.CIOK || !near(pr.P, 0.25, 1e-12) || pr.Above != 3 {
		t.Errorf("3 rounds: %+v", pr)
	}
	// A failed round (0) is left out.
	pr = RatioFromPairs([]float64{2, 0, 2}, []float64{1, 1, 1})
	if pr.Rounds != 2 || pr.Ratio != 2 {
		t.Errorf("with a zero: %+v", pr)
	}
}

// bruteMK is the reference for Mann-Kendall's exact p: S over every
// permutation of n distinct values.
func bruteMK(n, s int) float64 {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	count, total := 0, 0
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			total++
			ss := 0
			for i := 0; i < n; i++ {
				for j := i + 1; j < n; j++ {
					if perm[j] > perm[i] {
						ss++
					} else {
						ss--
					}
				}
			}
			if abs(ss) >= abs(s) {
				count++
			}
			return
		}
		for i := k; i < n; i++ {
			perm[k], perm[i] = perm[i], perm[k]
			rec(k + 1)
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	rec(0)
	return float64(count) / float64(total)
}

func TestMannKendall(t *testing.T) {
	t.Parallel()
	cases := []struct {
		xs  []float64
		s   int
		p   float64
		tau float64
	}{
		{[]float64{125, 137, 142}, 3, 2.0 / 6, 1},              // the warm-up report: 3 repeats cannot show it
		{[]float64{125, 131, 137, 140, 142}, 10, 2.0 / 120, 1}, // five can
		{[]float64{142, 140, 137, 131, 125, 120}, -15, 2.0 / 720, -1},
		{[]float64{3, 1, 2, 5, 4}, 4, 0, 0.4},
	}
	for _, c := range cases {
		got := MannKendall(c.xs)
		want := c.p
		if want == 0 {
			want = bruteMK(len(c.xs), c.s)
		}
		if got.S != c.s || !near(got.P, want, 1e-12) || !near(got.Tau, c.tau, 1e-12) || !got.Exact {
			t.Errorf("MannKendall(%v) = %+v, want S=%d p=%.5f tau=%.2f", c.xs, got, c.s, want, c.tau)
		}
	}
	// Every S for n = 6 against the enumeration.
	for s := -15; s <= 15; s += 2 {
		xs := seriesWithS(6, s)
		if got := MannKendall(xs); got.S != s || !near(got.P, bruteMK(6, s), 1e-12) {
			t.Errorf("n=6 S=%d: %+v, enumeration p %.6f", s, got, bruteMK(6, s))
		}
	}
	if got := MannKendall([]float64{1, 1, 1, 1}); got.P != 1 || got.S != 0 {
		t.Errorf("constant: %+v", got)
	}
}

// seriesWithS builds n distinct values whose Mann-Kendall S is s (s has the
// parity of n(n-1)/2): start increasing and swap adjacent pairs.
func seriesWithS(n, s int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i)
	}
	cur := n * (n - 1) / 2
	for cur > s {
		for i := 0; i+1 < n && cur > s; i++ {
			if xs[i] < xs[i+1] {
				xs[i], xs[i+1] = xs[i+1], xs[i]
				cur -= 2
			}
		}
	}
	return xs
}

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}
