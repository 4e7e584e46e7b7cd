package sequential

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The A/A simulation: sequences of paired rounds of two cells, stopped as
// until = "conclusive" stops (after each round from the minimum, as soon as
// the comparison is decided, at the latest at max_repeats), with noise
// drawn from recorded per-second tps series and from heavy-tailed and
// drifting models. Without a difference the rate of "significant" must stay
// at or below 5 %; a 1.3x difference must be found in most sequences within
// 12 rounds. Run it with: go test -run TestSequentialAA -v ./sequential/

const (
	simMin       = 3    // repeats, the minimum rounds
	simMax       = 12   // max_repeats
	simPrecision = 0.05 // precision
	simWindow    = 20   // seconds a round measures, drawn from a recorded series
)

// noise makes the tps of the two cells of one round (k from 0); both cells
// have the same true level.
type noise struct {
	name  string
	round func(rng *rand.Rand, k int) (a, b float64)
	// power is the share of sequences in which a 1.3x difference must be
	// found: most (> 0.5) under the recorded series, whose adjacent 20 s
	// windows differ by 17-32 % (sd of the log ratio), as much as the
	// difference itself; 0.8 under the models with less noise.
	power float64
}

// recordedSeries reads the per-second tps series recorded by the stall
// tests (the first column of each line).
func recordedSeries(t *testing.T, pattern string) [][]float64 {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "observe", "testdata", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded series in ../observe/testdata: %v", err)
	}
	var out [][]float64
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		var s []float64
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) == 0 {
				continue
			}
			v, err := strconv.ParseFloat(fields[0], 64)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			s = append(s, v)
		}
		fh.Close()
		if len(s) >= 2*simWindow {
			out = append(out, s)
		}
	}
	return out
}

// window is the mean tps of the simWindow seconds of s from start.
func window(s []float64, start int) float64 {
	sum := 0.0
	for _, v := range s[start : start+simWindow] {
		sum += v
	}
	return sum / simWindow
}

// fromSeries draws each round from one recorded series, chosen at random:
// the two cells of a round run back to back (as the runner runs a round),
// so they measure two adjacent windows at a random place in it, and which
// cell ran first is a coin flip. What drifts slowly in the series falls on
// both cells of the round; what changes from second to second does not.
func fromSeries(series [][]float64) func(rng *rand.Rand, k int) (float64, float64) {
	return func(rng *rand.Rand, k int) (float64, float64) {
		s := series[rng.IntN(len(series))]
		start := rng.IntN(len(s) - 2*simWindow + 1)
		a, b := window(s, start), window(s, start+simWindow)
		if rng.IntN(2) == 0 {
			a, b = b, a
		}
		return a, b
	}
}

func noises(control, injected [][]float64) []noise {
	return []noise{
		{"recorded control series (20 s windows)", fromSeries(control), 0.5},
		{"recorded series with injected stalls (20 s windows)", fromSeries(injected), 0.4},
		{"heavy-tailed (Student t, 2 df) with 10% stalled rounds", func(rng *rand.Rand, k int) (float64, float64) {
			one := func() float64 {
				v := 1000 * math.Exp(0.04*studentT(rng, 2))
				if rng.Float64() < 0.1 {
					v *= 0.3 + 0.5*rng.Float64()
				}
				return v
			}
			return one(), one()
		}, 0.8},
		{"drifting host (trend and random walk shared by the round, 3% noise)", func(rng *rand.Rand, k int) (float64, float64) {
			level := 1000 * (1 + 0.05*float64(k)) * math.Exp(0.2*rng.NormFloat64())
			return level * math.Exp(0.03*rng.NormFloat64()), level * math.Exp(0.03*rng.NormFloat64())
		}, 0.8},
	}
}

// studentT draws Student's t with df degrees of freedom.
func studentT(rng *rand.Rand, df int) float64 {
	chi := 0.0
	for range df {
		z := rng.NormFloat64()
		chi += z * z
	}
	return rng.NormFloat64() / math.Sqrt(chi/float64(df))
}

// simulate runs one sequence with the second cell's tps multiplied by
// factor, and returns the decision and the rounds it took.
func simulate(rng *rand.Rand, bd *Boundaries, nz noise, factor float64) (Outcome, int) {
	var d []float64
	for k := 0; k < simMax; k++ {
		a, b := nz.round(rng, k)
		d = append(d, math.Log(b*factor/a))
		if len(d) < simMin {
			continue
		}
		if dec := bd.Decide(d, simPrecision); dec.Outcome.Decided() {
			return dec.Outcome, len(d)
		}
	}
	return Undecided, len(d)
}

type simResult struct {
	n                          int
	higher, lower, equiv, none int
	rounds                     []int
}

func (r simResult) rate(k int) float64 { return float64(k) / float64(r.n) }

func (r simResult) medianRounds() float64 {
	s := append([]int(nil), r.rounds...)
	sort.Ints(s)
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return float64(s[len(s)/2])
	}
	return float64(s[len(s)/2-1]+s[len(s)/2]) / 2
}

func run(seed uint64, n int, bd *Boundaries, nz noise, factor float64) simResult {
	rng := rand.New(rand.NewPCG(seed, 0x73657175656e7469))
	res := simResult{n: n}
	for range n {
		out, rounds := simulate(rng, bd, nz, factor)
		switch out {
		case Higher:
			res.higher++
			res.rounds = append(res.rounds, rounds)
		case Lower:
			res.lower++
		case Equivalent:
			res.equiv++
		default:
			res.none++
		}
	}
	return res
}

func TestSequentialAA(t *testing.T) {
	if testing.Short() {
		t.Skip("the simulation runs tens of thousands of sequences")
	}
	bd, err := Design{Alpha: 0.05, First: simMin, Last: simMax}.Compute()
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000
	// The simulation's own error: 3 standard errors of a 5 % rate.
	margin := 3 * math.Sqrt(0.05*0.95/n)
	control, injected := recordedSeries(t, "stalls-control-*.txt"), recordedSeries(t, "stalls-inject*.txt")
	t.Logf("design: exact sign test, Pocock-type spending, looks %d..%d, α=0.05 (exact worst case %.4f), precision %.0f%%, %d sequences per case, seed fixed",
		simMin, simMax, bd.Spent[simMax], simPrecision*100, n)
	for i, nz := range noises(control, injected) {
		aa := run(uint64(100+i), n, bd, nz, 1)
		fp := aa.rate(aa.higher + aa.lower)
		t.Logf("A/A, %s: false positives %.2f%% (%d of %d), equivalent within 5%% %.1f%%, undecided after %d rounds %.1f%%",
			nz.name, 100*fp, aa.higher+aa.lower, n, 100*aa.rate(aa.equiv), simMax, 100*aa.rate(aa.none))
		if fp > 0.05+margin {
			t.Errorf("A/A, %s: false-positive rate %.4f above 5%% (+%.4f for the simulation's error)", nz.name, fp, margin)
		}
		p13 := run(uint64(200+i), n, bd, nz, 1.3)
		power := p13.rate(p13.higher)
		t.Logf("1.3x, %s: found in %.1f%% within %d rounds (median %.0f rounds), wrong direction %d",
			nz.name, 100*power, simMax, p13.medianRounds(), p13.lower)
		if power <= nz.power {
			t.Errorf("1.3x, %s: power %.3f, want more than %.2f", nz.name, power, nz.power)
		}
		if p13.lower > 0 {
			t.Errorf("1.3x, %s: %d sequences decided the wrong direction", nz.name, p13.lower)
		}
		for _, f := range []float64{2, 70} {
			r := run(uint64(300+i), n/5, bd, nz, f)
			t.Logf("%gx, %s: found in %.1f%% (median %.0f rounds)", f, nz.name, 100*r.rate(r.higher), r.medianRounds())
			if r.rate(r.higher) < 0.95 {
				t.Errorf("%gx, %s: found in only %.3f", f, nz.name, r.rate(r.higher))
			}
		}
	}
}
