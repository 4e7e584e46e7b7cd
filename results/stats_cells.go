package results

import (
	"fmt"
	"io"
	"math"

	"benchmatrix/analysis"
	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/section"
)

// NoisyPct is the spread, in percent of the median, above which a cell's
// repeats are called noisy: a CoV above it, or a confidence interval
// reaching further than it from the median (reference/anchors.md §3.4).
const NoisyPct = 5.0

// CellStat is the spread of one cell's tps over its successful repeats.
type CellStat struct {
	Name     string             `json:"name"`
	Scenario string             `json:"scenario,omitempty"`
	Params   []experiment.Param `json:"params"`
	N        int                `json:"n"` // successful repeats
	Failed   int                `json:"failed"`
	// MedianTPS and its 95 % confidence interval [CILow, CIHigh]; the
	// bounds are NaN and CIOK false below 6 repeats.
	MedianTPS float64 `json:"median_tps"`
	CILow     float64 `json:"ci_low"`
	CIHigh    float64 `json:"ci_high"`
	CIOK      bool    `json:"ci_ok"`
	MeanTPS   float64 `json:"mean_tps"`
	StdDevTPS float64 `json:"stddev_tps"` // NaN below 2 repeats
	CoV       float64 `json:"cov_pct"`    // NaN below 2 repeats
	// Noisy: CoV above NoisyPct, or the interval reaching further than
	// NoisyPct from the median. Why says which, for the reader.
	Noisy bool   `json:"noisy"`
	Why   string `json:"why,omitempty"`
}

// CellStats returns, per cell name in run order, the median tps over the
// successful repeats with its confidence interval and spread.
func CellStats(r *record.Run) []CellStat {
	var order []string
	by := map[string]*CellStat{}
	tps := map[string][]float64{}
	for _, c := range r.Cells {
		s, ok := by[c.Name]
		if !ok {
			s = &CellStat{Name: c.Name, Scenario: c.Scenario, Params: c.Params}
			by[c.Name] = s
			order = append(order, c.Name)
		}
		if c.Status != record.CellOK || c.Result == nil {
			s.Failed++
			continue
		}
		tps[c.Name] = append(tps[c.Name], c.Result.TPS())
	}
	out := make([]CellStat, 0, len(order))
	for _, name := range order {
		s := by[name]
		xs := tps[name]
		mi := analysis.MedianCI(xs, analysis.Confidence)
		s.N = len(xs)
		s.MedianTPS, s.CILow, s.CIHigh, s.CIOK = mi.Median, mi.Lo, mi.Hi, mi.OK
		s.MeanTPS, s.StdDevTPS, s.CoV = analysis.Mean(xs), analysis.StdDev(xs), analysis.CoV(xs)
		switch {
		case s.CoV > NoisyPct:
			s.Noisy, s.Why = true, fmt.Sprintf("CoV %.1f%% > %g%%", s.CoV, NoisyPct)
		case s.CIOK && s.MedianTPS > 0 && ciHalfWidthPct(mi) > NoisyPct:
			s.Noisy, s.Why = true, fmt.Sprintf("95%% CI ±%.1f%% > ±%g%%", ciHalfWidthPct(mi), NoisyPct)
		}
		out = append(out, *s)
	}
	return out
}

// ciHalfWidthPct is how far the interval reaches from the median, on its
// wider side, in percent of the median.
func ciHalfWidthPct(mi analysis.MedianInterval) float64 {
	return math.Max(mi.Hi-mi.Median, mi.Median-mi.Lo) / math.Abs(mi.Median) * 100
}

// CellStatsRows returns the header and rows of the repeat-spread table.
func CellStatsRows(r *record.Run) ([]string, [][]string) {
	header := []string{"cell", "n", "median tps", "95% CI", "CoV", "noisy", "trend over repeats"}
	trends := map[string]analysis.Trend{}
	for _, t := range cellTrends(r) {
		trends[t.Name] = t.Trend
	}
	var rows [][]string
	for _, s := range CellStats(r) {
		n := fmt.Sprintf("%d", s.N)
		if s.Failed > 0 {
			n = fmt.Sprintf("%d (%d failed)", s.N, s.Failed)
		}
		row := []string{s.Name, n, "-", "-", "-", ""}
		if s.N > 0 {
			row[2] = fmt.Sprintf("%.1f", s.MedianTPS)
		}
		if s.CIOK {
			row[3] = fmt.Sprintf("%.1f – %.1f", s.CILow, s.CIHigh)
		}
		if !math.IsNaN(s.CoV) {
			row[4] = fmt.Sprintf("%.1f%%", s.CoV)
		}
		if s.Noisy {
			row[5] = "yes: " + s.Why
		}
		row = append(row, trendText(trends[s.Name]))
		rows = append(rows, row)
	}
	return header, rows
}

// WriteCellStats writes the repeat-spread table as Markdown, with a line
// on how to read it, for summary.md.
func WriteCellStats(w io.Writer, r *record.Run) error {
	header, rows := CellStatsRows(r)
	if err := section.MarkdownTable(w, header, rows); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nmedian tps over the successful repeats with its distribution-free 95%% confidence interval "+
		"(needs ≥%d repeats); CoV is the standard deviation in percent of the mean; "+
		"a cell is noisy when the CoV or the interval's reach exceeds %g%% of the median. "+
		"The trend is the Mann-Kendall test of tps against the order the repeats ran in (Kendall's τ and the two-sided p; "+
		"flagged at p < 0.05, which needs ≥5 repeats): a rise or fall there is an order effect such as warm-up, not noise.\n",
		analysis.MinSamplesForCI(analysis.Confidence), NoisyPct)
	return err
}

// trendText is the repeats table's trend cell: "-" below 3 repeats, else
// τ and p, flagged when significant.
func trendText(t analysis.Trend) string {
	if t.N < 3 {
		return "-"
	}
	s := fmt.Sprintf("τ=%+.2f p=%s", t.Tau, analysis.FormatP(t.P))
	if t.P < DefaultAlpha {
		if t.S > 0 {
			return "**rising** " + s
		}
		return "**falling** " + s
	}
	return s
}
