package sequential

import (
	"fmt"
	"math"
)

// duration = "auto": how long a cell should measure so that the run
// reaches its decision in the least wall time. A pure function of what the
// first round measured.
//
// Model. A cell measured for L seconds reports the mean of L per-second
// rates. Its log varies from round to round by
//
//	v(L) = cv² τ / L
//
// with cv the per-second coefficient of variation and τ = (1+ρ)/(1-ρ) the
// integrated autocorrelation time of an AR(1) series with the lag-1
// autocorrelation ρ measured (slow noise does not average out as fast as
// white noise). A round's log ratio of cells x and y then varies by
// σ²(L) = v_x(L) + v_y(L) + b, b being what does not shrink with L (drift
// between the two cells of a round, setup differences): RoundFloor.
//
// Rounds. The stopping rule's t-test decides a comparison at the first
// look n where its interval's half-width c_n σ/√n falls below what it has
// to resolve: the precision (to call "no difference") or half the log
// ratio the first round saw (to call a difference of that size), whichever
// is larger. A round costs the cells' fixed time (setup, warm-up, drain:
// what the first round spent besides measuring) plus L each. The length
// chosen minimises (rounds to decide the slowest comparison) × (round
// time): many short rounds when setup is cheap and the noise fast, fewer
// longer ones when setup is dear or the noise slow. When no length decides
// within max_repeats, the length that buys the most precision per second
// of wall time (the least σ²(L) × round time).

// RoundFloor is the standard deviation of a round's log ratio assumed not
// to shrink with the cells' length (b above): 1 %.
const RoundFloor = 0.01

// CellNoise is what the first round measured of one cell.
type CellNoise struct {
	Name      string
	PerSecond []float64 // the measured window's per-second rates
	Fixed     float64   // seconds the cell took besides measuring
}

// Comparison is a pair the run decides, with the ratio the first round
// measured (x/y; 0 when unknown).
type Comparison struct {
	X, Y  string
	Ratio float64
}

// LengthChoice is the chosen cell length and why.
type LengthChoice struct {
	Seconds      int     // the measured window
	Rounds       int     // the rounds the slowest comparison is expected to need
	RoundSeconds float64 // a round's expected wall time at that length
	Why          string
}

// noiseOf is cv² τ of a per-second series; ok is false when it has too
// few seconds or no mean.
func noiseOf(xs []float64) (float64, bool) {
	n := len(xs)
	if n < 3 {
		return 0, false
	}
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(n)
	if m <= 0 {
		return 0, false
	}
	v, c := 0.0, 0.0
	for i, x := range xs {
		v += (x - m) * (x - m)
		if i > 0 {
			c += (x - m) * (xs[i-1] - m)
		}
	}
	if v == 0 {
		return 0, true
	}
	rho := math.Min(math.Max(c/v, 0), 0.9)
	return v / float64(n-1) / (m * m) * (1 + rho) / (1 - rho), true
}

// sigma2Max is the largest σ²(L) over the comparisons.
func sigma2Max(noise map[string]float64, cmp []Comparison, L int) float64 {
	v := 0.0
	for _, p := range cmp {
		v = max(v, (noise[p.X]+noise[p.Y])/float64(L)+RoundFloor*RoundFloor)
	}
	return v
}

// ChooseLength picks the measured window, in whole seconds from lo to hi,
// for the cells and comparisons of a run decided by rule at precision.
func ChooseLength(cells []CellNoise, cmp []Comparison, rule *Rule, precision float64, lo, hi int) (LengthChoice, error) {
	if lo < 1 || hi < lo {
		return LengthChoice{}, fmt.Errorf("cell length %d..%d s: want 1 <= lo <= hi", lo, hi)
	}
	noise := map[string]float64{}
	fixed := 0.0
	for _, c := range cells {
		nz, ok := noiseOf(c.PerSecond)
		if !ok {
			return LengthChoice{}, fmt.Errorf("cell %s: %d per-second rates, too few to measure its noise", c.Name, len(c.PerSecond))
		}
		noise[c.Name] = max(noise[c.Name], nz)
		fixed += c.Fixed
	}
	if len(cmp) == 0 {
		return LengthChoice{}, fmt.Errorf("no comparison to decide")
	}
	e := math.Log1p(precision)
	first, last := rule.T.First, rule.T.Last
	best, bestCost, bestOK := LengthChoice{}, math.Inf(1), false
	for L := lo; L <= hi; L++ {
		round := fixed + float64(L*len(cells))
		worst := 0
		for _, p := range cmp {
			s := math.Sqrt((noise[p.X]+noise[p.Y])/float64(L) + RoundFloor*RoundFloor)
			h := e
			if p.Ratio > 0 {
				h = max(e, math.Abs(math.Log(p.Ratio))/2)
			}
			n := last + 1
			for k := max(first, 2); k <= last; k++ {
				if rule.T.Crit[k]*s/math.Sqrt(float64(k)) <= h {
					n = k
					break
				}
			}
			worst = max(worst, n)
		}
		ok := worst <= last
		cost := float64(worst) * round
		if !ok {
			// Undecidable within max_repeats at this length: the
			// variance a second of wall time buys, σ²(L) T(L).
			cost = sigma2Max(noise, cmp, L) * round
		}
		if (ok && !bestOK) || (ok == bestOK && cost < bestCost*(1-1e-9)) {
			best, bestCost, bestOK = LengthChoice{Seconds: L, Rounds: worst, RoundSeconds: round}, cost, ok
		}
	}
	rounds := fmt.Sprintf("about %d rounds", best.Rounds)
	if best.Rounds > last {
		rounds = fmt.Sprintf("more than max_repeats (%d) rounds at any length", last)
	}
	best.Why = fmt.Sprintf("%d s cells: the first round's noise and setup (%.1f s a round besides measuring) give the least time to a decision, %s of %.0f s",
		best.Seconds, fixed, rounds, best.RoundSeconds)
	return best, nil
}
