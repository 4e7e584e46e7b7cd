package analysis

import (
	"math"

	"benchmatrix/engine"
	"benchmatrix/record"
)

// RatioLine is one cell against its baseline cell, on the figure
// ComparisonFigure chose (analysis/headline.go).
type RatioLine struct {
	Cell     string          `json:"cell"`
	Baseline string          `json:"baseline"`
	Figure   engine.Headline `json:"figure"`
	Ratio    PairedRatio     `json:"ratio"`
}

// Headline is the line's figure (tps for a line made before lines carried
// one).
func (l RatioLine) Headline() engine.Headline {
	if l.Figure.Name == "" {
		return engine.TPS
	}
	return l.Figure
}

// Ratios is every cell against its baseline cell: the paired ratio over
// the rounds both finished, on the figure ComparisonFigure chose (notes say
// when that is tps because the cells' headlines differ); in a conclusive
// run each with the rounds' interval (roundsIntervals).
func Ratios(r *record.Run, br map[string]map[int]*record.Cell) ([]RatioLine, []string) {
	var out []RatioLine
	var notes []string
	if r.Baseline != "" {
		sums := r.Summaries()
		for _, s := range sums {
			b := BaselineFor(r.Baseline, s, sums)
			if b == "" || b == s.Name {
				continue
			}
			fig, note := ComparisonFigure(r, s.Name, b)
			if note != "" {
				notes = append(notes, note)
			}
			xs, ys := PairedValues(br, s.Name, b, fig.Name)
			out = append(out, RatioLine{Cell: s.Name, Baseline: b, Figure: fig, Ratio: RatioFromPairs(xs, ys)})
		}
	}
	roundsIntervals(out, RoundsOf(r))
	return out, notes
}

// roundsIntervals gives each scenario-vs-baseline ratio of a conclusive run
// the rounds' interval (the confidence sequence, valid however often the
// run looked) in place of the fixed-rounds one, so that the Conclusion, the
// Results table, the pivot and the plots show one ratio with one interval.
// A side the looks have not bounded yet leaves the ratio without one.
func roundsIntervals(ls []RatioLine, rec *record.RoundsRecord) {
	if rec == nil {
		return
	}
	for i := range ls {
		l := &ls[i]
		for _, d := range rec.Decisions {
			if d.Expectation != "" || d.X != l.Cell || d.Y != l.Baseline {
				continue
			}
			l.Ratio.Lo, l.Ratio.Hi, l.Ratio.CIOK, l.Ratio.Coverage = math.NaN(), math.NaN(), false, 0
			if d.CILo > 0 && d.CIHi > 0 {
				l.Ratio.Lo, l.Ratio.Hi, l.Ratio.CIOK, l.Ratio.Coverage = d.CILo, d.CIHi, true, 1-d.Alpha
			}
		}
	}
}
