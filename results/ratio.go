package results

import (
	"fmt"
	"math"

	"benchmatrix/analysis"
	"benchmatrix/record"
)

// One ratio (issue 26): "X vs baseline" within a run is the Conclusion's
// paired ratio (Conclude: Hodges-Lehmann over the per-round tps ratios,
// with its distribution-free 95 % interval from 6 rounds on). The Results
// table, the pivot, the tps plot and compare's within-run column all take
// it from here, so that one comparison shows one number everywhere.
// Between two runs compare has its own, labelled estimate: the change of
// the median, unpaired.

// baselineRatios is the Conclusion's ratio of every cell that has a
// baseline cell, by cell name.
func baselineRatios(r *record.Run) map[string]*analysis.RatioLine {
	out := map[string]*analysis.RatioLine{}
	if r == nil || r.Baseline == "" {
		return out
	}
	for _, l := range Conclude(r).Ratios {
		out[l.Cell] = &l
	}
	return out
}

// ratioHeading is the Results table's ratio column: "tps vs b1e1", "NOPM
// vs b1e1" (the figure every ratio is on: analysis/headline.go), "ratio vs b1e1"
// when the lines are on different figures.
func ratioHeading(r *record.Run, ratios map[string]*analysis.RatioLine) string {
	var ls []analysis.RatioLine
	for _, l := range ratios {
		ls = append(ls, *l)
	}
	f := ratiosFigure(ls)
	switch {
	case len(ls) == 0:
		f = "tps"
	case f == "":
		f = "ratio"
	}
	return f + " vs " + r.Baseline
}

// RatioText is a paired ratio as the tables show it: "1.13x (0.98-1.30)"
// with its 95 % interval, "1.13x" without one, "-" with no paired round.
func RatioText(pr analysis.PairedRatio) string {
	if pr.Rounds == 0 || math.IsNaN(pr.Ratio) {
		return "-"
	}
	if pr.CIOK {
		return fmt.Sprintf("%.2fx (%.2f-%.2f)", pr.Ratio, pr.Lo, pr.Hi)
	}
	return fmt.Sprintf("%.2fx", pr.Ratio)
}
