package analysis

import (
	"math"
	"testing"
)

func TestSettleRule(t *testing.T) {
	t.Parallel()
	rule := DefaultSettleRule
	climb := func(n, to int, level float64) []float64 { // linear climb to level at second `to`, then flat
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = level
			if i < to {
				xs[i] = level * float64(i+1) / float64(to)
			}
		}
		return xs
	}
	noisy := climb(60, 20, 400)
	for i := range noisy {
		if i >= 20 {
			noisy[i] += []float64{-30, 25, -10, 35, -20}[i%5]
		}
	}
	// A busy host: seconds swing ±60 around 100, and the first 10 s climb
	// from 80: a climb smaller than the noise is not a climb.
	busy := climb(40, 10, 100)
	for i := range busy {
		busy[i] = max(busy[i], 80) + []float64{60, -60, 30, -30}[i%4]
	}
	nan := climb(40, 10, 100)
	nan[25], nan[26] = math.NaN(), math.NaN()
	for _, c := range []struct {
		name    string
		xs      []float64
		settled bool
		lo, hi  float64 // the settling second within [lo, hi]
	}{
		{"flat from the start", climb(30, 0, 100), true, 0, 0},
		{"climb over 20 s, then flat", climb(60, 20, 400), true, 14, 20},
		{"climb with noise", noisy, true, 12, 22},
		{"still climbing at the end", climb(30, 40, 400), false, 0, 30},
		{"settled too late to hold", climb(30, 22, 400), false, 0, 30},
		{"too short", climb(10, 0, 100), false, 0, 0},
		{"gaps are skipped", nan, true, 4, 10},
		{"a climb within a busy host's noise", busy, true, 0, 3},
		{"reads falling to zero", []float64{3000, 2800, 2500, 2000, 1500, 1000, 600, 300, 100, 50, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, true, 4, 9},
	} {
		s := rule.Settle(c.xs)
		if s.Settled != c.settled {
			t.Errorf("%s: settled %v, want %v (%+v)", c.name, s.Settled, c.settled, s)
			continue
		}
		if s.Settled && (s.Seconds < c.lo || s.Seconds > c.hi) {
			t.Errorf("%s: settled at %.0f s, want %.0f-%.0f (%+v)", c.name, s.Seconds, c.lo, c.hi, s)
		}
	}
}
