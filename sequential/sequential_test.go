package sequential

import (
	"math"
	"testing"
)

func TestDesignValidate(t *testing.T) {
	t.Parallel()
	for _, d := range []Design{
		{Alpha: 0, First: 3, Last: 12},
		{Alpha: 1, First: 3, Last: 12},
		{Alpha: 0.05, First: 0, Last: 12},
		{Alpha: 0.05, First: 5, Last: 4},
		{Alpha: 0.05, First: 3, Last: MaxLooks + 1},
		{Alpha: 0.05, First: 3, Last: 12, Spending: "linear"},
	} {
		if _, err := d.Compute(); err == nil {
			t.Errorf("%+v: no error", d)
		}
	}
}

// The boundaries never spend more than α, and the spending is monotone and
// within the spending function at every look.
func TestBoundariesSpendWithinAlpha(t *testing.T) {
	t.Parallel()
	for _, s := range []Spending{Pocock, OBrienFleming} {
		for _, last := range []int{3, 6, 12, 20, 50} {
			for _, alpha := range []float64{0.05, 0.025, 0.01} {
				d := Design{Alpha: alpha, First: min(3, last), Last: last, Spending: s}
				bd, err := d.Compute()
				if err != nil {
					t.Fatal(err)
				}
				prev := 0.0
				for n := d.First; n <= last; n++ {
					if bd.Spent[n] < prev {
						t.Errorf("%+v: spent fell at look %d", d, n)
					}
					if lim := s.Spent(alpha, float64(n)/float64(last)); bd.Spent[n] > lim*(1+1e-9) {
						t.Errorf("%+v: look %d spent %g > α(t) %g", d, n, bd.Spent[n], lim)
					}
					prev = bd.Spent[n]
				}
			}
		}
	}
}

// Every one of the 2^12 sign patterns of 12 pairs (with distinct
// magnitudes): the share whose confidence sequence excludes 0 at some look
// is the exact type I error, and it is within α.
func TestExactTypeIError(t *testing.T) {
	t.Parallel()
	for _, s := range []Spending{Pocock, OBrienFleming} {
		bd, err := Design{Alpha: 0.05, First: 3, Last: 12, Spending: s}.Compute()
		if err != nil {
			t.Fatal(err)
		}
		n := 12
		rejected := 0
		d := make([]float64, n)
		for mask := 0; mask < 1<<n; mask++ {
			for i := range d {
				mag := 0.01 * float64((i*7)%n+1) // distinct, in no particular order
				if mask&(1<<i) != 0 {
					d[i] = mag
				} else {
					d[i] = -mag
				}
			}
			// Any look: the sequence is nested, so the last says it.
			if iv := bd.Interval(d); !iv.Contains(0) {
				rejected++
			}
		}
		got := float64(rejected) / float64(int(1)<<n)
		if got > 0.05 || math.Abs(got-bd.Spent[n]) > 1e-12 {
			t.Errorf("%s: type I error %g, boundaries say %g", s, got, bd.Spent[n])
		}
		if got == 0 {
			t.Errorf("%s: no pattern is rejected: the test cannot fail", s)
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	bd, err := Design{Alpha: 0.05, First: 3, Last: 12}.Compute()
	if err != nil {
		t.Fatal(err)
	}
	if n := bd.FirstDecisive(); n != 7 {
		t.Errorf("first decisive look %d, want 7 (2/2^7 < α(7/12) with Pocock spending)", n)
	}
	up := func(n int, v float64) []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = v + 0.001*float64(i%3)
		}
		return d
	}
	cases := []struct {
		name string
		d    []float64
		want Outcome
	}{
		{"six rounds all faster: too few", up(6, math.Log(1.3)), Undecided},
		{"seven rounds all faster", up(7, math.Log(1.3)), Higher},
		{"seven rounds all slower", up(7, -math.Log(2)), Lower},
		{"twelve tiny differences both ways", []float64{0.01, -0.01, 0.005, -0.02, 0.012, -0.004, 0.003, -0.011, 0.008, -0.006, 0.002, -0.009}, Equivalent},
		{"twelve wide differences both ways", []float64{0.3, -0.2, 0.1, -0.25, 0.2, -0.1, 0.05, -0.3, 0.15, -0.05, 0.22, -0.18}, Undecided},
	}
	for _, c := range cases {
		got := bd.Decide(c.d, 0.05)
		if got.Outcome != c.want {
			t.Errorf("%s: %s (interval %.3f..%.3f), want %s", c.name, got.Outcome, got.Interval.Lo, got.Interval.Hi, c.want)
		}
	}
	// A significant but small difference is higher, and within precision.
	small := up(12, 0.02)
	if got := bd.Decide(small, 0.05); got.Outcome != Higher || !got.Within {
		t.Errorf("small sure difference: %+v", got)
	}
}

// The interval only narrows as pairs come in.
func TestIntervalNested(t *testing.T) {
	t.Parallel()
	bd, err := Design{Alpha: 0.05, First: 3, Last: 20}.Compute()
	if err != nil {
		t.Fatal(err)
	}
	d := []float64{0.1, 0.3, -0.05, 0.2, 0.15, 0.12, 0.4, 0.02, 0.18, 0.22, 0.09, 0.11, 0.3, -0.01, 0.16, 0.2, 0.13, 0.17, 0.14, 0.19}
	prev := Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
	for n := 1; n <= len(d); n++ {
		iv := bd.Interval(d[:n])
		if iv.Lo < prev.Lo || iv.Hi > prev.Hi {
			t.Errorf("look %d: %v is not inside %v", n, iv, prev)
		}
		prev = iv
	}
	if !(prev.Lo > 0) {
		t.Errorf("20 pairs mostly above 0: interval %v does not exclude 0", prev)
	}
}
