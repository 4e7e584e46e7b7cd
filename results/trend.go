package results

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"benchmatrix/analysis"
)

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
// the run's cells.

// repeatsJudgement is what the repeats of a run say together.
type repeatsJudgement struct {
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
	Text    string
}

// repeatRun is one successful repeat of a cell.
type repeatRun struct {
	repeat    int
	tps       float64
	contended bool
	restarted bool
}

// cellRuns is one cell's successful repeats in the order they ran.
type cellRuns struct {
	name string
	runs []repeatRun
	// cold: restarted before every repeat (and repeated).
	cold bool
}

func (c cellRuns) tps() []float64 {
	out := make([]float64, len(c.runs))
	for i, rr := range c.runs {
		out[i] = rr.tps
	}
	return out
}

// cellRepeatRuns is every cell (in run order) with its successful repeats
// in the order they ran (by index).
func cellRepeatRuns(r *Run) []cellRuns {
	var out []cellRuns
	at := map[string]int{}
	var cells [][]Cell
	for _, c := range r.Cells {
		i, ok := at[c.Name]
		if !ok {
			i = len(out)
			at[c.Name] = i
			out = append(out, cellRuns{name: c.Name, cold: true})
			cells = append(cells, nil)
		}
		cells[i] = append(cells[i], c)
	}
	for i, cs := range cells {
		sort.SliceStable(cs, func(a, b int) bool { return cs[a].Index < cs[b].Index })
		for _, c := range cs {
			if c.Status != CellOK || c.Result == nil {
				continue
			}
			// A fresh server (the run's first cell) starts cold too.
			restarted := c.Restarted || c.Change.Start || c.Change.Cold
			out[i].runs = append(out[i].runs, repeatRun{repeat: c.Repeat, tps: c.Result.TPS(), restarted: restarted,
				contended: c.Contention != nil && c.Contention.Contended})
			out[i].cold = out[i].cold && restarted
		}
		out[i].cold = out[i].cold && len(out[i].runs) > 1
	}
	return out
}

func judgeRepeats(r *Run) (repeatsJudgement, bool) {
	type trended struct {
		cellRuns
		tr analysis.Trend
	}
	var cells []trended
	rounds := map[int][2]int{} // repeat → contended, measured
	for _, cr := range cellRepeatRuns(r) {
		for _, rr := range cr.runs {
			n := rounds[rr.repeat]
			n[1]++
			if rr.contended {
				n[0]++
			}
			rounds[rr.repeat] = n
		}
		if len(cr.runs) < minRepeatsForFigure {
			continue
		}
		cells = append(cells, trended{cr, analysis.MannKendall(cr.tps())})
	}
	var j repeatsJudgement
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
		if c.tr.P < analysis.Alpha {
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
	pooled := j.PooledP < analysis.Alpha
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
	moves := func(tr analysis.Trend) bool { return float64(sign)*tr.Tau >= 0.5 }
	for _, c := range cells {
		if moves(c.tr) {
			j.Moving++
		}
	}
	var relC, relQ []float64
	var contRounds, quietRounds []float64
	for _, c := range cells {
		if c.cold {
			j.Cold++
		}
		if !moves(c.tr) {
			continue
		}
		if c.cold {
			j.ColdMoving++
		}
		med := Median(c.tps())
		for _, rr := range c.runs {
			if med <= 0 {
				continue
			}
			if rr.contended {
				j.Contended++
				relC = append(relC, rr.tps/med)
				contRounds = append(contRounds, float64(rr.repeat))
			} else {
				relQ = append(relQ, rr.tps/med)
				quietRounds = append(quietRounds, float64(rr.repeat))
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
		j.RelContended = Median(relC)
	}
	if len(relQ) > 0 {
		j.RelQuiet = Median(relQ)
	}
	// Contention lines up: the contended runs are the slow ones, and they
	// sit where the trend puts the slow runs (early for a rise).
	aligned := len(relC) > 0 && len(relQ) > 0 && j.RelContended < j.RelQuiet &&
		float64(sign)*(mean(contRounds)-mean(quietRounds)) < 0
	head := fmt.Sprintf("tps %s over the repeats in %d of %d cells (Mann-Kendall pooled over the cells: p=%s)", j.Dir, j.Moving, j.Cells, formatP(j.PooledP))
	switch {
	case j.Cold > 0 && j.ColdMoving > 0:
		head += fmt.Sprintf(", cold-restarted ones included (%d of %d)", j.ColdMoving, j.Cold)
	case j.Cold > 0:
		head += fmt.Sprintf(", none of the %d cold-restarted", j.Cold)
	}
	switch {
	case aligned:
		j.Cause = "host load"
		when := fmt.Sprintf("%d of their runs were contended", j.Contended)
		if len(j.ContendedRounds) > 0 {
			when = "round " + joinInts(j.ContendedRounds) + " was contended"
			if len(j.ContendedRounds) > 1 {
				when = "rounds " + joinInts(j.ContendedRounds) + " were contended"
			}
		}
		j.Text = fmt.Sprintf("%s, while %s (contended runs at %.2f of their cell's median tps, the others at %.2f): host load, not warm-up",
			head, when, j.RelContended, j.RelQuiet)
	case j.ColdMoving > 0:
		j.Cause = "drift"
		j.Text = head + ", and no recorded contention lines up with it: not warm-up (a cold restart empties the buffer pool before each of those repeats) " +
			"and not recorded host load; drift of another kind (table growth, the OS cache, load that was not recorded)"
	case j.Cold > 0:
		j.Cause = "warm-up"
		j.Text = head + ", and no recorded contention lines up with it: warm-up (or growth) carried from repeat to repeat by the cells that keep a warm server"
	default:
		j.Cause = "warm-up"
		j.Text = head + ", and no recorded contention lines up with it: warm-up or growth carried from repeat to repeat (no cell restarted cold to tell it from other drift)"
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

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	if len(s) > 1 {
		return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
	}
	return strings.Join(s, "")
}

// repeatFlags is, per cell, whether each successful repeat (in the order
// tpsByRepeat gives) was contended, and whether the cell restarted cold
// before every repeat.
func repeatFlags(r *Run) (contended map[string][]bool, cold map[string]bool) {
	contended, cold = map[string][]bool{}, map[string]bool{}
	for _, c := range cellRepeatRuns(r) {
		for _, rr := range c.runs {
			contended[c.name] = append(contended[c.name], rr.contended)
		}
		cold[c.name] = c.cold
	}
	return contended, cold
}
