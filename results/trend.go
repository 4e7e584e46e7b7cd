package results

import (
	"fmt"
	"strings"

	"benchmatrix/analysis"
)

// repeatsText says in words what the repeats of a run say together
// (analysis.JudgeRepeats, analysis/trend.go): which way tps moved, in how
// many cells, and why (host load, warm-up, drift).
func repeatsText(j analysis.RepeatsJudgement) string {
	head := fmt.Sprintf("tps %s over the repeats in %d of %d cells (Mann-Kendall pooled over the cells: p=%s)", j.Dir, j.Moving, j.Cells, analysis.FormatP(j.PooledP))
	switch {
	case j.Cold > 0 && j.ColdMoving > 0:
		head += fmt.Sprintf(", cold-restarted ones included (%d of %d)", j.ColdMoving, j.Cold)
	case j.Cold > 0:
		head += fmt.Sprintf(", none of the %d cold-restarted", j.Cold)
	}
	switch j.Cause {
	case "host load":
		when := fmt.Sprintf("%d of their runs were contended", j.Contended)
		if len(j.ContendedRounds) > 0 {
			when = "round " + joinInts(j.ContendedRounds) + " was contended"
			if len(j.ContendedRounds) > 1 {
				when = "rounds " + joinInts(j.ContendedRounds) + " were contended"
			}
		}
		return fmt.Sprintf("%s, while %s (contended runs at %.2f of their cell's median tps, the others at %.2f): host load, not warm-up",
			head, when, j.RelContended, j.RelQuiet)
	case "drift":
		return head + ", and no recorded contention lines up with it: not warm-up (a cold restart empties the buffer pool before each of those repeats) " +
			"and not recorded host load; drift of another kind (table growth, the OS cache, load that was not recorded)"
	case "warm-up":
		if j.Cold > 0 {
			return head + ", and no recorded contention lines up with it: warm-up (or growth) carried from repeat to repeat by the cells that keep a warm server"
		}
	}
	return head + ", and no recorded contention lines up with it: warm-up or growth carried from repeat to repeat (no cell restarted cold to tell it from other drift)"
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
