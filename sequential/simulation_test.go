package sequential

import (
	"bufio"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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
	// power is the share of sequences in which a 1.2x difference must at
	// least be found within 12 rounds (a floor a little under what the
	// rule finds, to catch a regression): few under the recorded series,
	// whose adjacent 20 s windows differ by 17-32 % (sd of the log ratio),
	// and the contended A/A rounds (35-50 %), more than the difference
	// itself; most under the models with less noise.
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
		{"recorded control series (20 s windows)", fromSeries(control), 0.12},
		{"recorded series with injected stalls (20 s windows)", fromSeries(injected), 0.10},
		{"heavy-tailed (Student t, 2 df) with 10% stalled rounds", func(rng *rand.Rand, k int) (float64, float64) {
			one := func() float64 {
				v := 1000 * math.Exp(0.04*studentT(rng, 2))
				if rng.Float64() < 0.1 {
					v *= 0.3 + 0.5*rng.Float64()
				}
				return v
			}
			return one(), one()
		}, 0.55},
		{"drifting host (trend and random walk shared by the round, 3% noise)", func(rng *rand.Rand, k int) (float64, float64) {
			level := 1000 * (1 + 0.05*float64(k)) * math.Exp(0.2*rng.NormFloat64())
			return level * math.Exp(0.03*rng.NormFloat64()), level * math.Exp(0.03*rng.NormFloat64())
		}, 0.95},
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

// decider is a stopping rule as the runner uses it.
type decider interface {
	Decide(d []float64, precision float64) Decision
}

// simulate runs one sequence with the second cell's tps multiplied by
// factor, and returns the decision and the rounds it took.
func simulate(rng *rand.Rand, rule decider, nz noise, factor float64) (Outcome, int) {
	var d []float64
	for k := 0; k < simMax; k++ {
		a, b := nz.round(rng, k)
		d = append(d, math.Log(b*factor/a))
		if len(d) < simMin {
			continue
		}
		if dec := rule.Decide(d, simPrecision); dec.Outcome.Decided() {
			return dec.Outcome, len(d)
		}
	}
	return Undecided, len(d)
}

type simResult struct {
	n                          int
	higher, lower, equiv, none int
	rounds                     []int // of the sequences decided higher
	all                        int   // rounds run by every sequence together
}

func (r simResult) rate(k int) float64 { return float64(k) / float64(r.n) }

func (r simResult) meanRounds() float64 { return float64(r.all) / float64(r.n) }

func run(seed uint64, n int, rule decider, nz noise, factor float64) simResult {
	rng := rand.New(rand.NewPCG(seed, 0x73657175656e7469))
	res := simResult{n: n}
	for range n {
		out, rounds := simulate(rng, rule, nz, factor)
		res.all += rounds
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

// TestSequentialAA holds the stopping rule of conclusive runs (Rule: the
// sign test and the anytime-valid t-test, each at 2.5 %) to its level on
// every noise, recorded and modelled, and measures what it costs against
// the rule before (the sign test alone at 5 %): the rounds to a decision
// for true ratios of 1.05, 1.2, 1.75 and 3, side by side in one run.
func TestSequentialAA(t *testing.T) {
	if testing.Short() {
		t.Skip("the simulation runs tens of thousands of sequences")
	}
	old, err := Design{Alpha: 0.05, First: simMin, Last: simMax}.Compute()
	if err != nil {
		t.Fatal(err)
	}
	rule, err := NewRule(0.05, simMin, simMax)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4000
	// The simulation's own error: 3 standard errors of a 5 % rate.
	margin := 3 * math.Sqrt(0.05*0.95/n)
	control, injected := recordedSeries(t, "stalls-control-*.txt"), recordedSeries(t, "stalls-inject*.txt")
	t.Logf("rule: sign test + anytime-valid t-test, each at 2.5%%, looks %d..%d; before: the sign test alone at 5%% (exact worst case %.4f); precision %.0f%%, %d sequences per case, seed fixed",
		simMin, simMax, old.Spent[simMax], simPrecision*100, n)
	t.Logf("%-72s %6s %6s | %s", "noise", "FP new", "FP old", "true ratio: found % and mean rounds, new vs old")
	for i, nz := range append(noises(control, injected), recordedRounds(t)...) {
		aa := run(uint64(100+i), n, rule, nz, 1)
		aaOld := run(uint64(100+i), n, old, nz, 1)
		fp, fpOld := aa.rate(aa.higher+aa.lower), aaOld.rate(aaOld.higher+aaOld.lower)
		if fp > 0.05+margin {
			t.Errorf("A/A, %s: false-positive rate %.4f above 5%% (+%.4f for the simulation's error)", nz.name, fp, margin)
		}
		line := ""
		for j, f := range []float64{1.05, 1.2, 1.75, 3} {
			m := n / 4
			nw := run(uint64(300+10*i+j), m, rule, nz, f)
			od := run(uint64(300+10*i+j), m, old, nz, f)
			line += fmt.Sprintf(" %gx %3.0f%% %4.1f / %3.0f%% %4.1f |", f, 100*nw.rate(nw.higher), nw.meanRounds(), 100*od.rate(od.higher), od.meanRounds())
			// Deciding the wrong direction is a false positive too: at
			// most its side of the level.
			if nw.rate(nw.lower) > 0.025+margin {
				t.Errorf("%gx, %s: %.4f of the sequences decided the wrong direction", f, nz.name, nw.rate(nw.lower))
			}
			// A difference as large as the field's (1.75x) or larger is
			// decided sooner on average than by the sign test alone (on
			// the noisiest series, at most a tenth of a round later: the
			// sign test at 2.5 % needs one more same-sign round at its
			// last looks), and 3x always within 12 rounds.
			if f >= 1.75 && (nw.meanRounds() > od.meanRounds()+0.1 || (f == 3 && nw.rate(nw.higher) < 0.99)) {
				t.Errorf("%gx, %s: new rule %.1f rounds (found %.3f), the sign test alone %.1f (%.3f)", f, nz.name, nw.meanRounds(), nw.rate(nw.higher), od.meanRounds(), od.rate(od.higher))
			}
			if f == 1.2 && nw.rate(nw.higher) <= nz.power {
				t.Errorf("1.2x, %s: power %.3f, want more than %.2f", nz.name, nw.rate(nw.higher), nz.power)
			}
		}
		t.Logf("%-72s %5.2f%% %5.2f%% |%s", nz.name, 100*fp, 100*fpOld, line)
	}
}

// recordedRounds are the noises of real paired rounds: testdata/rounds-*.tsv
// hold the per-round tps of two cells with the same settings (an A/A pair)
// from runs of benchmatrix here, quiet and beside a disk or CPU neighbour
// (each file's comment says which, and the command). Each sequence draws a
// run at random and walks its rounds in order from a random start (the
// drift and the neighbours' changes stay as they were; a sequence longer
// than the rest of the run wraps around), and which cell is "a" is a coin
// flip per sequence: the two cells had the same settings, so their labels
// are exchangeable.
func recordedRounds(t *testing.T) []noise {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "rounds-*.tsv"))
	type pair struct{ a, b float64 }
	byKind := map[string][][]pair{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rs []pair
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 3 || strings.HasPrefix(fields[0], "#") {
				continue
			}
			a, err1 := strconv.ParseFloat(fields[1], 64)
			b, err2 := strconv.ParseFloat(fields[2], 64)
			if err1 != nil || err2 != nil || a <= 0 || b <= 0 {
				t.Fatalf("%s: %q: want round, tps a, tps b", f, line)
			}
			rs = append(rs, pair{a, b})
		}
		if len(rs) < simMax {
			t.Fatalf("%s: %d rounds, want at least %d", f, len(rs), simMax)
		}
		kind := strings.SplitN(strings.TrimPrefix(filepath.Base(f), "rounds-"), "-", 2)[0]
		byKind[kind] = append(byKind[kind], rs)
	}
	if len(byKind) == 0 {
		t.Fatal("no recorded rounds in testdata/rounds-*.tsv")
	}
	var out []noise
	for _, kind := range slices.Sorted(maps.Keys(byKind)) {
		runs := byKind[kind]
		var run, start int
		var flip bool
		out = append(out, noise{
			name: fmt.Sprintf("recorded A/A rounds, %s (%d pairs of cells x 25 rounds)", kind, len(runs)),
			round: func(rng *rand.Rand, k int) (float64, float64) {
				if k == 0 {
					run = rng.IntN(len(runs))
					start, flip = rng.IntN(len(runs[run])), rng.IntN(2) == 0
				}
				p := runs[run][(start+k)%len(runs[run])]
				if flip {
					return p.b, p.a
				}
				return p.a, p.b
			},
			power: map[string]float64{"contended": 0.06, "quiet": 0.95}[kind],
		})
	}
	return out
}
