package analysis

import (
	"math"
	"sort"

	"benchmatrix/record"
)

// MinRepeatsForTrend is the fewest successful repeats of a cell the trend
// test judges (and plots/repeats.png draws).
const MinRepeatsForTrend = 3

// Repeats that tell warm-up from host load (issue 26). A cell's tps that
// rises or falls over its repeats is an order effect, not noise; which one
// is told by looking at every cell together:
//
//   - host load: the repeats measured under contention (observe's flag) are
//     the slow ones (their tps relative to the cell's median below the
//     others'), and they line up with the trend (for a rise, the contended
//     rounds come first);
//   - warm-up (or growth) carried from repeat to repeat: no contention lines
//     up, and the cells restarted cold before every repeat (whose buffer pool
//     starts empty each time) do not move while the warm ones do;
//   - drift of another kind: no contention lines up, yet the cold-restarted
//     cells move too, so it is not what a warm server carries over.
//
// The trend is the cells' Mann-Kendall statistics pooled (a common rise or
// fall, p < 0.05), or a single cell's significant one. A pure function of
// the run's cells; results/trend.go says it in words.

// RepeatsJudgement is what the repeats of a run say together.
type RepeatsJudgement struct {
	Dir           string // "rose" or "fell"
	Moving, Cells int    // cells moving that way, cells with enough repeats
	ColdMoving    int    // cold-restarted cells moving that way
	Cold          int    // cells restarted before every repeat
	// ContendedRounds are the rounds in which most cells were contended.
	ContendedRounds []int
	Contended       int // contended cell runs among the moving cells
	// RelContended and RelQuiet are the median tps, relative to each
	// cell's median, of the moving cells' contended and other runs.
	RelContended, RelQuiet float64
	// PooledP is the two-sided p of the pooled Mann-Kendall test.
	PooledP float64
	Cause   string // "host load", "warm-up", "drift"
}

// RepeatRun is one successful repeat of a cell.
type RepeatRun struct {
	Repeat    int
	TPS       float64
	Contended bool
	Restarted bool
}

// CellRuns is one cell's successful repeats in the order they ran.
type CellRuns struct {
	Name string
	Runs []RepeatRun
	// Cold: restarted before every repeat (and repeated).
	Cold bool
}

// TPS is the cell's tps over its successful repeats, in the order they ran.
func (c CellRuns) TPS() []float64 {
	out := make([]float64, len(c.Runs))
	for i, rr := range c.Runs {
		out[i] = rr.TPS
	}
	return out
}

// CellRepeatRuns is every cell (in run order) with its successful repeats
// in the order they ran (by index).
func CellRepeatRuns(r *record.Run) []CellRuns {
	var out []CellRuns
	at := map[string]int{}
	var cells [][]record.Cell
	for _, c := range r.Cells {
		i, ok := at[c.Name]
		if !ok {
			i = len(out)
			at[c.Name] = i
			out = append(out, CellRuns{Name: c.Name, Cold: true})
			cells = append(cells, nil)
		}
		cells[i] = append(cells[i], c)
	}
	for i, cs := range cells {
		sort.SliceStable(cs, func(a, b int) bool { return cs[a].Index < cs[b].Index })
		for _, c := range cs {
			if c.Status != record.CellOK || c.Result == nil {
				continue
			}
			// A fresh server (the run's first cell) starts cold too.
			restarted := c.Restarted || c.Change.Start || c.Change.Cold
			out[i].Runs = append(out[i].Runs, RepeatRun{Repeat: c.Repeat, TPS: c.Result.TPS(), Restarted: restarted,
				Contended: c.Contention != nil && c.Contention.Contended})
			out[i].Cold = out[i].Cold && restarted
		}
		out[i].Cold = out[i].Cold && len(out[i].Runs) > 1
	}
	return out
}

// JudgeRepeats is what the repeats of a run say together; false when no
// trend is significant.
func JudgeRepeats(r *record.Run) (RepeatsJudgement, bool) {
	type trended struct {
		CellRuns
		tr Trend
	}
	var cells []trended
	rounds := map[int][2]int{} // repeat → contended, measured
	for _, cr := range CellRepeatRuns(r) {
		for _, rr := range cr.Runs {
			n := rounds[rr.Repeat]
			n[1]++
			if rr.Contended {
				n[0]++
			}
			rounds[rr.Repeat] = n
		}
		if len(cr.Runs) < MinRepeatsForTrend {
			continue
		}
		cells = append(cells, trended{cr, MannKendall(cr.TPS())})
	}
	var j RepeatsJudgement
	j.Cells = len(cells)
	if j.Cells == 0 {
		return j, false
	}
	// The cells together: the pooled Mann-Kendall statistic, ΣS over
	// Σvar(S) (the cells' noise is independent under no order effect).
	sumS, sumVar := 0.0, 0.0
	sigUp, sigDown := 0, 0
	for _, c := range cells {
		n := float64(c.tr.N)
		sumS += float64(c.tr.S)
		sumVar += n * (n - 1) * (2*n + 5) / 18
		if c.tr.P < Alpha {
			if c.tr.S > 0 {
				sigUp++
			} else {
				sigDown++
			}
		}
	}
	j.PooledP = 1
	if sumVar > 0 {
		z := math.Max(math.Abs(sumS)-1, 0) / math.Sqrt(sumVar)
		j.PooledP = math.Min(1, math.Erfc(z/math.Sqrt2))
	}
	pooled := j.PooledP < Alpha
	if sigUp+sigDown == 0 && !pooled {
		return j, false
	}
	// The direction: the significant cells', else the pooled one.
	sign := 1
	if sigDown > sigUp || (sigDown == sigUp && sumS < 0) {
		sign = -1
	}
	j.Dir = "rose"
	if sign < 0 {
		j.Dir = "fell"
	}
	// A cell moves that way when its τ says so clearly (≥ 0.5: with 3
	// repeats, all in order).
	moves := func(tr Trend) bool { return float64(sign)*tr.Tau >= 0.5 }
	for _, c := range cells {
		if moves(c.tr) {
			j.Moving++
		}
	}
	var relC, relQ []float64
	var contRounds, quietRounds []float64
	for _, c := range cells {
		if c.Cold {
			j.Cold++
		}
		if !moves(c.tr) {
			continue
		}
		if c.Cold {
			j.ColdMoving++
		}
		med := record.Median(c.TPS())
		for _, rr := range c.Runs {
			if med <= 0 {
				continue
			}
			if rr.Contended {
				j.Contended++
				relC = append(relC, rr.TPS/med)
				contRounds = append(contRounds, float64(rr.Repeat))
			} else {
				relQ = append(relQ, rr.TPS/med)
				quietRounds = append(quietRounds, float64(rr.Repeat))
			}
		}
	}
	var reps []int
	for rep := range rounds {
		reps = append(reps, rep)
	}
	sort.Ints(reps)
	for _, rep := range reps {
		if n := rounds[rep]; 2*n[0] > n[1] {
			j.ContendedRounds = append(j.ContendedRounds, rep)
		}
	}
	j.RelContended, j.RelQuiet = math.NaN(), math.NaN()
	if len(relC) > 0 {
		j.RelContended = record.Median(relC)
	}
	if len(relQ) > 0 {
		j.RelQuiet = record.Median(relQ)
	}
	// Contention lines up: the contended runs are the slow ones, and they
	// sit where the trend puts the slow runs (early for a rise).
	aligned := len(relC) > 0 && len(relQ) > 0 && j.RelContended < j.RelQuiet &&
		float64(sign)*(mean(contRounds)-mean(quietRounds)) < 0
	switch {
	case aligned:
		j.Cause = "host load"
	case j.ColdMoving > 0:
		j.Cause = "drift"
	default:
		j.Cause = "warm-up"
	}
	return j, true
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// RepeatFlags is, per cell, whether each successful repeat (in the order
// results' tpsByRepeat gives) was contended, and whether the cell restarted cold
// before every repeat.
func RepeatFlags(r *record.Run) (contended map[string][]bool, cold map[string]bool) {
	contended, cold = map[string][]bool{}, map[string]bool{}
	for _, c := range CellRepeatRuns(r) {
		for _, rr := range c.Runs {
			contended[c.Name] = append(contended[c.Name], rr.Contended)
		}
		cold[c.Name] = c.Cold
	}
	return contended, cold
}
