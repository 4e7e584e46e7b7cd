package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/perf/benchmath"
)

func TestMeanStdDevCoV(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		xs            []float64
		mean, sd, cov float64
	}{
		// The textbook example (Wikipedia, "Standard deviation"): population
		// σ = 2, so the sample s = sqrt(32/7).
		{"wikipedia", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, math.Sqrt(32.0 / 7), math.Sqrt(32.0/7) / 5 * 100},
		{"constant", []float64{3, 3, 3}, 3, 0, 0},
		{"two", []float64{90, 110}, 100, math.Sqrt(200), math.Sqrt(200)},
		{"one", []float64{7}, 7, math.NaN(), math.NaN()},
		{"none", nil, math.NaN(), math.NaN(), math.NaN()},
		{"zero mean", []float64{-1, 1}, 0, math.Sqrt2, math.NaN()},
	}
	for _, c := range cases {
		if got := Mean(c.xs); !near(got, c.mean, 1e-12) {
			t.Errorf("%s: Mean = %v, want %v", c.name, got, c.mean)
		}
		if got := StdDev(c.xs); !near(got, c.sd, 1e-12) {
			t.Errorf("%s: StdDev = %v, want %v", c.name, got, c.sd)
		}
		if got := CoV(c.xs); !near(got, c.cov, 1e-9) {
			t.Errorf("%s: CoV = %v, want %v", c.name, got, c.cov)
		}
	}
}

// The order statistics of a distribution-free 95 % confidence interval for
// the median, as tabulated in nonparametric statistics texts (e.g. Conover,
// Practical Nonparametric Statistics, table A3; Hollander & Wolfe): the
// interval is [x(l), x(n+1-l)] with exact coverage 1 - 2 P(B <= l-1),
// B ~ Binomial(n, 1/2).
func TestMedianCIOrdersTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		n, lo, hi int
		coverage  float64 // to 4 places
	}{
		{6, 1, 6, 0.9688},  // 1 - 2/64
		{7, 1, 7, 0.9844},  // 1 - 2/128
		{8, 1, 8, 0.9922},  // 1 - 2/256
		{9, 2, 8, 0.9609},  // 1 - 20/512
		{10, 2, 9, 0.9785}, // 1 - 22/1024
		{11, 2, 10, 0.9883},
		{12, 3, 10, 0.9614},
		{15, 4, 12, 0.9648},
		{20, 6, 15, 0.9586},
		{25, 8, 18, 0.9567},
		{30, 10, 21, 0.9572},
	}
	for _, c := range cases {
		lo, hi, cov, ok := MedianCIOrders(c.n, 0.95)
		if !ok || lo != c.lo || hi != c.hi || !near(cov, c.coverage, 5e-5) {
			t.Errorf("n=%d: orders (%d, %d) coverage %.4f ok %v; want (%d, %d) %.4f", c.n, lo, hi, cov, ok, c.lo, c.hi, c.coverage)
		}
	}
	for n := 0; n < 6; n++ {
		if _, _, _, ok := MedianCIOrders(n, 0.95); ok {
			t.Errorf("n=%d: a 95%% interval should not be available", n)
		}
	}
	if got := MinSamplesForCI(0.95); got != 6 {
		t.Errorf("MinSamplesForCI(0.95) = %d, want 6", got)
	}
	// 99 %: [min, max] of 7 covers 0.9844, of 8 covers 0.9922.
	if got := MinSamplesForCI(0.99); got != 8 {
		t.Errorf("MinSamplesForCI(0.99) = %d, want 8", got)
	}
	// Large n must neither overflow nor underflow; the normal approximation
	// puts l near n/2 - 1.96 sqrt(n)/2.
	lo, hi, cov, ok := MedianCIOrders(2000, 0.95)
	if !ok || lo < 950 || lo > 960 || hi != 2001-lo || cov < 0.95 || cov > 0.96 {
		t.Errorf("n=2000: (%d, %d) %.4f %v", lo, hi, cov, ok)
	}
}

func TestMedianCI(t *testing.T) {
	t.Parallel()
	xs := []float64{10, 3, 8, 1, 7, 2, 9, 4, 6, 5} // 1..10 shuffled
	mi := MedianCI(xs, 0.95)
	if !mi.OK || mi.Median != 5.5 || mi.Lo != 2 || mi.Hi != 9 || mi.N != 10 {
		t.Errorf("MedianCI(1..10) = %+v, want median 5.5 in [2, 9]", mi)
	}
	if xs[0] != 10 {
		t.Error("MedianCI sorted its input")
	}
	small := MedianCI([]float64{3, 1, 2}, 0.95)
	if small.OK || small.Median != 2 || !math.IsNaN(small.Lo) || !math.IsNaN(small.Hi) {
		t.Errorf("MedianCI of 3 values = %+v, want median 2 and no interval", small)
	}
	if none := MedianCI(nil, 0.95); none.OK || !math.IsNaN(none.Median) {
		t.Errorf("MedianCI(nil) = %+v", none)
	}
}

// sampleWithU builds two tie-free samples of sizes n1 and n2 whose U1 (the
// number of pairs x > y) is u: y = 10, 20, ...; each x sits above some of
// the y values, the counts adding up to u.
func sampleWithU(n1, n2, u int) (x, y []float64) {
	for j := 1; j <= n2; j++ {
		y = append(y, float64(10*j))
	}
	above := make([]int, n1)
	for i := n1 - 1; i >= 0 && u > 0; i-- {
		k := min(u, n2)
		above[i] = k
		u -= k
	}
	for i, a := range above {
		x = append(x, float64(10*a)+5+float64(i)*0.001)
	}
	return x, y
}

// Critical values of the two-sided Mann-Whitney U test at α = 0.05 from the
// published tables (e.g. Mann & Whitney 1947; the table in Siegel &
// Castellan, Nonparametric Statistics, table J): U <= crit is significant,
// U = crit+1 is not.
func TestMannWhitneyCriticalValues(t *testing.T) {
	t.Parallel()
	cases := []struct{ n1, n2, crit int }{
		{4, 4, 0},
		{5, 5, 2},
		{6, 6, 5},
		{7, 7, 8},
		{8, 8, 13},
		{9, 9, 17},
		{10, 10, 23},
		{5, 8, 6},
		{6, 10, 11},
		{20, 20, 127},
	}
	for _, c := range cases {
		x, y := sampleWithU(c.n1, c.n2, c.crit)
		r, err := MannWhitneyU(x, y)
		if err != nil || r.U != float64(c.crit) || !r.Exact || r.P >= 0.05 {
			t.Errorf("n=%d,%d U=%d: %+v %v, want exact p < 0.05", c.n1, c.n2, c.crit, r, err)
		}
		x, y = sampleWithU(c.n1, c.n2, c.crit+1)
		r, err = MannWhitneyU(x, y)
		if err != nil || r.U != float64(c.crit+1) || r.P < 0.05 {
			t.Errorf("n=%d,%d U=%d: %+v %v, want p >= 0.05", c.n1, c.n2, c.crit+1, r, err)
		}
	}
}

func TestMannWhitneyExactValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		x, y []float64
		u, p float64
	}{
		// Complete separation: p = 2 / C(n1+n2, n1).
		{"3v3 separated", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1},
		{"4v4 separated", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0, 2.0 / 70},
		{"5v5 separated", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 25, 2.0 / 252},
		// n1 = n2 = 5, U = 2: P(U <= 2) = 4/252; U = 3: 7/252.
		{"5v5 U=2", []float64{1, 2, 3, 4.5, 4.6}, []float64{4, 5, 6, 7, 8}, 2, 8.0 / 252},
		// U = n1 n2 / 2, the centre of the distribution: p = 1.
		{"balanced", []float64{1, 4, 5, 8}, []float64{2, 3, 6, 7}, 8, 1},
		// One against one: p = 1 whatever the order.
		{"1v1", []float64{1}, []float64{2}, 0, 1},
	}
	for _, c := range cases {
		r, err := MannWhitneyU(c.x, c.y)
		if err != nil || r.U != c.u || !near(r.P, c.p, 1e-12) || !r.Exact {
			t.Errorf("%s: %+v %v, want U=%v p=%v exact", c.name, r, err, c.u, c.p)
		}
	}
}

// With ties the p-value comes from the normal approximation with tie and
// continuity correction. The expected values were worked by hand:
//
//	x = 1 2 2 3 4, y = 2 3 5 6 6: ranks of x 1, 3, 3, 5.5, 7 → R1 = 19.5,
//	U1 = 4.5; ties t = 3 (the 2s), 2 (the 3s), 2 (the 6s): Σ(t³-t) = 36;
//	σ² = 25/12 (11 - 36/90) = 22.0833; z = (12.5 - 4.5 - 0.5)/σ = 1.59599;
//	p = erfc(z/√2) = 0.110492.
func TestMannWhitneyTies(t *testing.T) {
	t.Parallel()
	r, err := MannWhitneyU([]float64{1, 2, 2, 3, 4}, []float64{2, 3, 5, 6, 6})
	if err != nil || r.Exact || r.U != 4.5 || !near(r.P, 0.110492, 1e-6) {
		t.Errorf("ties: %+v %v, want U=4.5 p=0.110492 (normal approximation)", r, err)
	}
	r, err = MannWhitneyU([]float64{5, 5, 5}, []float64{5, 5})
	if err != nil || r.P != 1 {
		t.Errorf("all equal: %+v %v, want p=1", r, err)
	}
	if _, err := MannWhitneyU(nil, []float64{1}); err == nil {
		t.Error("empty sample: no error")
	}
}

// benchstat's implementation (golang.org/x/perf/benchmath, AssumeNothing)
// must agree wherever both use the same method: without ties, exact up to
// 50 per side and the normal approximation beyond.
func TestMannWhitneyAgreesWithBenchmath(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	th := &benchmath.Thresholds{CompareAlpha: 0.05}
	sizes := [][2]int{{2, 3}, {3, 3}, {4, 4}, {5, 5}, {5, 7}, {6, 6}, {8, 5}, {10, 10}, {12, 20}, {30, 30}, {50, 50}, {60, 55}}
	for _, sz := range sizes {
		for trial := 0; trial < 20; trial++ {
			shift := rng.Float64() * 2
			x := make([]float64, sz[0])
			y := make([]float64, sz[1])
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			for i := range y {
				y[i] = rng.NormFloat64() + shift
			}
			r, err := MannWhitneyU(x, y)
			if err != nil {
				t.Fatal(err)
			}
			want := benchmath.AssumeNothing.Compare(benchmath.NewSample(x, th), benchmath.NewSample(y, th))
			if !near(r.P, want.P, 1e-9*math.Max(1, want.P)) {
				t.Errorf("n=%v trial %d: p = %.12g, benchmath %.12g", sz, trial, r.P, want.P)
			}
		}
	}
}

func TestUTestMinP(t *testing.T) {
	t.Parallel()
	cases := []struct {
		n1, n2 int
		p      float64
	}{
		{3, 3, 0.1},
		{4, 4, 2.0 / 70},
		{5, 5, 2.0 / 252},
		{2, 2, 1.0 / 3},
		{1, 1, 1},
		{0, 5, 1},
	}
	for _, c := range cases {
		if got := UTestMinP(c.n1, c.n2); !near(got, c.p, 1e-12) {
			t.Errorf("UTestMinP(%d, %d) = %v, want %v", c.n1, c.n2, got, c.p)
		}
	}
	if got := MinRepeatsToDetect(0.05); got != 4 {
		t.Errorf("MinRepeatsToDetect(0.05) = %d, want 4", got)
	}
	if got := MinRepeatsToDetect(0.01); got != 5 {
		t.Errorf("MinRepeatsToDetect(0.01) = %d, want 5", got)
	}
}
