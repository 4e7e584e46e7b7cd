package sequential

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func series(rng *rand.Rand, n int, mean, cv, rho float64) []float64 {
	out := make([]float64, n)
	e := 0.0
	for i := range out {
		e = rho*e + rng.NormFloat64()*cv
		out[i] = mean * (1 + e)
	}
	return out
}

func TestChooseLength(t *testing.T) {
	t.Parallel()
	rule, err := NewRule(0.05, 3, 12)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	two := func(cv, rho, fixed float64) []CellNoise {
		return []CellNoise{
			{Name: "a", PerSecond: series(rng, 5, 1000, cv, rho), Fixed: fixed},
			{Name: "b", PerSecond: series(rng, 5, 1000, cv, rho), Fixed: fixed},
		}
	}
	// A large difference (1.75x) with modest noise: the shortest cells.
	c, err := ChooseLength(two(0.05, 0, 1), []Comparison{{"b", "a", 1.75}}, rule, 0.05, 2, 30)
	if err != nil || c.Seconds != 2 || c.Rounds > 4 {
		t.Errorf("1.75x, 5%% noise, 1 s setup: %+v, %v; want 2 s cells decided within 4 rounds", c, err)
	}
	// No difference to resolve within 5 % with 10 % per-second noise:
	// longer cells, and longer still when each cell costs 20 s of setup.
	cells := two(0.05, 0, 1)
	cheap, _ := ChooseLength(cells, []Comparison{{"b", "a", 1}}, rule, 0.05, 2, 60)
	cells[0].Fixed, cells[1].Fixed = 20, 20
	dear, _ := ChooseLength(cells, []Comparison{{"b", "a", 1}}, rule, 0.05, 2, 60)
	if !(cheap.Seconds > 2 && dear.Seconds > cheap.Seconds) {
		t.Errorf("A/A with 5%% noise: %d s cells with 1 s setup, %d s with 20 s setup; want longer than 2 s, longer with dear setup", cheap.Seconds, dear.Seconds)
	}
	t.Logf("A/A, 5%% noise: %s; with dear setup: %s", cheap.Why, dear.Why)
	// Undecidable at any length (40 % noise): the most precision per
	// second, not the shortest cells.
	if c, _ := ChooseLength(two(0.4, 0, 5), []Comparison{{"b", "a", 1}}, rule, 0.05, 2, 60); c.Seconds <= 2 || c.Rounds <= 12 || !strings.Contains(c.Why, "more than max_repeats") {
		t.Errorf("A/A, 40%% noise: %+v", c)
	}
	if !strings.Contains(cheap.Why, "s cells: the first round's noise and setup") {
		t.Errorf("why: %q", cheap.Why)
	}
	// Too few seconds to measure the noise: an error, not a guess.
	if _, err := ChooseLength([]CellNoise{{Name: "a", PerSecond: []float64{1, 2}}}, []Comparison{{"a", "a", 1}}, rule, 0.05, 2, 30); err == nil {
		t.Error("two seconds: no error")
	}
}
