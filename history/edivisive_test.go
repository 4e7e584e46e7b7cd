package history

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// qNaive is the paper's Q(X, Y; alpha) computed straight from its
// definition.
func qNaive(x, y []float64, alpha float64) float64 {
	n, m := float64(len(x)), float64(len(y))
	d := func(a, b float64) float64 { return math.Pow(math.Abs(a-b), alpha) }
	between := 0.0
	for _, a := range x {
		for _, b := range y {
			between += d(a, b)
		}
	}
	wx, wy := 0.0, 0.0
	for i := range x {
		for k := i + 1; k < len(x); k++ {
			wx += d(x[i], x[k])
		}
	}
	for j := range y {
		for k := j + 1; k < len(y); k++ {
			wy += d(y[j], y[k])
		}
	}
	e := 2 * between / (n * m)
	if len(x) > 1 {
		e -= wx / (n * (n - 1) / 2)
	}
	if len(y) > 1 {
		e -= wy / (m * (m - 1) / 2)
	}
	return n * m / (n + m) * e
}

// The incremental search finds the same best split and statistic as the
// definition evaluated at every (tau, kappa).
func TestSegmentSplitMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 50 {
		n := 6 + rng.IntN(20)
		z := make([]float64, n)
		for i := range z {
			z[i] = rng.NormFloat64()
			if i > n/2 && trial%2 == 0 {
				z[i] += 1.5
			}
		}
		for _, alpha := range []float64{0.5, 1, 1.5} {
			p := Params{Alpha: alpha, MinSize: 2 + trial%3}
			got := segmentSplit(z, p)
			bestQ, bestTau := math.Inf(-1), -1
			for tau := p.MinSize; tau <= n-p.MinSize; tau++ {
				for kappa := tau + p.MinSize; kappa <= n; kappa++ {
					if q := qNaive(z[:tau], z[tau:kappa], alpha); q > bestQ+1e-9 {
						bestQ, bestTau = q, tau
					}
				}
			}
			if got.index != bestTau || math.Abs(got.q-bestQ) > 1e-6*math.Max(1, math.Abs(bestQ)) {
				t.Fatalf("n %d alpha %g min %d: got tau %d Q %g, definition tau %d Q %g", n, alpha, p.MinSize, got.index, got.q, bestTau, bestQ)
			}
		}
	}
}

// A clear step is found at its run and only there; a flat series has no
// change point; two steps are both found.
func TestEDivisiveSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	noisy := func(n int, level func(i int) float64) []float64 {
		z := make([]float64, n)
		for i := range z {
			z[i] = level(i) * (1 + 0.02*rng.NormFloat64())
		}
		return z
	}
	cases := []struct {
		name string
		z    []float64
		want []int
	}{
		{"flat", noisy(20, func(int) float64 { return 1000 }), nil},
		{"step at 11", noisy(20, func(i int) float64 { return map[bool]float64{true: 1000, false: 800}[i < 10] }), []int{10}},
		{"two steps", noisy(30, func(i int) float64 {
			switch {
			case i < 10:
				return 1000
			case i < 20:
				return 700
			}
			return 1000
		}), []int{10, 20}},
	}
	for _, c := range cases {
		got := EDivisive(c.z, DefaultParams())
		var idx []int
		for _, s := range got {
			idx = append(idx, s.Index)
		}
		if len(idx) != len(c.want) {
			t.Fatalf("%s: change points %v, want %v", c.name, got, c.want)
		}
		for i := range idx {
			if idx[i] != c.want[i] {
				t.Fatalf("%s: change points %v, want %v", c.name, got, c.want)
			}
		}
	}
}

// The newest run alone, far below the level before it, is a regression
// that begins at the newest run; the same run just as noisy as the others
// is not.
func TestChangesNewestRun(t *testing.T) {
	base := []float64{1000, 1012, 995, 990, 1007, 1003, 998, 1010, 993, 1001}
	got := Changes(append(append([]float64(nil), base...), 900), nil, true, DefaultOptions())
	if len(got) != 1 || got[0].Index != 10 || got[0].Method != "newest" || !got[0].Regression || math.Abs(got[0].Change+0.1) > 0.01 {
		t.Fatalf("newest run 10%% lower: %+v", got)
	}
	if got := Changes(append(append([]float64(nil), base...), 1005), nil, true, DefaultOptions()); len(got) != 0 {
		t.Fatalf("newest run as the others: %+v", got)
	}
	// For p99 lower is better: a drop is an improvement.
	if got := Changes(append(append([]float64(nil), base...), 900), nil, false, DefaultOptions()); len(got) != 1 || got[0].Regression {
		t.Fatalf("p99 10%% lower: %+v", got)
	}
}

// With repeats, the newest run is tested on them by ranks: a run whose
// every repeat is below every repeat of the level is found, though its
// median alone is within reach of the level's medians (the t test on run
// values does not find it); one stalled repeat in the level costs one rank.
func TestChangesNewestRunRepeats(t *testing.T) {
	var vals []float64
	var reps [][]float64
	for i := range 10 {
		f := float64(i)
		// Distinct values (ties would take the normal approximation).
		r := []float64{801.1 + 40*f, 1199.2 - 40*f, 925.3 + 150*float64(i%2) + 0.7*f}
		if i == 4 {
			r[1] = 20.4 // a stall
		}
		reps = append(reps, r)
		vals = append(vals, median3(r[0], r[1], r[2]))
	}
	reps = append(reps, []float64{780, 790, 795})
	vals = append(vals, 790)
	got := Changes(vals, reps, true, DefaultOptions())
	if len(got) != 1 || got[0].Index != 10 || got[0].Method != "newest" || !got[0].Regression {
		t.Fatalf("newest run below every repeat of the level: %+v", got)
	}
	if got := Changes(vals, nil, true, DefaultOptions()); len(got) != 0 {
		t.Fatalf("the same medians without repeats (t test): %+v, want none (this case must need the repeats)", got)
	}
}

// readNoise reads a recorded noise file of testdata (repeat,tps).
func readNoise(t testing.TB, name string) []float64 {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "repeat") || l == "" {
			continue
		}
		_, v, _ := strings.Cut(l, ",")
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	return out
}
