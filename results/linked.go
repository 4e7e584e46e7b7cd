package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"benchmatrix/analysis"
	"benchmatrix/record"
	"benchmatrix/section"
)

// The Conclusion's "Mechanism and outcome" lines (issue 27, item 4): the
// words for what analysis (linked.go) judged of each compared pair, the
// figures that differ most, the model's share of the throughput
// difference, and the tables' growth.

// linkedLines are the Conclusion's "Mechanism and outcome" lines.
func linkedLines(r *record.Run, ratios []analysis.RatioLine) []string {
	pairs := analysis.ComparedPairs(r, ratios)
	if len(pairs) == 0 {
		return nil
	}
	cells := analysis.LinkedCells(r)
	var out []string
	for _, p := range pairs {
		x, y := cells[p.Cell], cells[p.Ref]
		if x == nil || y == nil || x.TPS <= 0 || y.TPS <= 0 {
			continue
		}
		if s := linkedMechanismLine(p, x, y); s != "" {
			out = append(out, s)
		}
		if s := linkedGrowthLine(p, x, y); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ratioWords is a figure's ratio as the line says it: "×2.01", "from
// none", "to none".
func ratioWords(d analysis.FigureDiff) string {
	switch {
	case d.Ratio == 0:
		return "to none"
	case math.IsInf(d.Ratio, 1):
		return "from none"
	case d.Ratio < 0.01:
		return "×" + figure3(d.Ratio)
	}
	return fmt.Sprintf("×%.2f", d.Ratio)
}

// linkedMechanismLine is "b0e1 against b1e1: tps ×2.01 (...); differs most
// in ...; the model ... accounts for about 85% of the difference".
func linkedMechanismLine(p analysis.CellPair, x, y *analysis.LinkedCell) string {
	a := analysis.Account(x, y)
	s := fmt.Sprintf("%s against %s: tps ×%.2f (%s vs %s per transaction per thread)", p.Cell, p.Ref, x.TPS/y.TPS, durText(a.TX), durText(a.TY))
	diffs := analysis.Differing(x.Mech, y.Mech)
	if len(diffs) == 0 && len(x.Mech) == 0 {
		return ""
	}
	var parts []string
	for _, d := range diffs {
		parts = append(parts, fmt.Sprintf("%s %s vs %s (%s)", d.Words, figure3(d.X), figure3(d.Y), ratioWords(d)))
	}
	if len(parts) > 0 {
		s += "; differs most in " + strings.Join(parts, ", ")
	} else {
		s += fmt.Sprintf("; no per-transaction figure differs by %.0f%% or more", analysis.LinkedMinDiff*100)
	}
	switch a.Verdict {
	case analysis.AccountsEqual:
		return s + "; the throughput is about equal: nothing to account for"
	case analysis.AccountsNoFigures:
		return s + "; no fsync latency or server CPU figures to account for the difference"
	}
	s += fmt.Sprintf("; predicted (fsyncs × device await + server CPU, per transaction) %s vs %s, a difference of %s against %s measured",
		durText(a.PX), durText(a.PY), signedDur(a.PX-a.PY), signedDur(a.TX-a.TY))
	switch a.Verdict {
	case analysis.AccountsNone:
		return s + ": it does not account for the difference (the model predicts none, or the opposite direction)"
	case analysis.AccountsNegligible:
		return s + fmt.Sprintf(": it does not account for the difference (about %.0f%%)", a.Share*100)
	case analysis.AccountsOver:
		return s + fmt.Sprintf(": it predicts %.0f%% of the difference, more than measured (group commit and parallel CPU are left out of the model)", a.Share*100)
	}
	return s + fmt.Sprintf(": it accounts for about %.0f%% of the difference", a.Share*100)
}

// signedDur is durText with a sign.
func signedDur(sec float64) string {
	if sec < 0 {
		return "−" + durText(-sec)
	}
	return "+" + durText(sec)
}

// linkedGrowthLine words a table's growth in either cell against what
// differs: "autoinc against same: the table grew 1.0% of its rows (20000 →
// 20200) and 1.2% of its bytes in 60 s (same: 0.0%, 0.0%): too little to
// explain 3 stalls against 1 (a table under 5% larger barely changes the
// working set)". "" when neither cell's table grew.
func linkedGrowthLine(p analysis.CellPair, x, y *analysis.LinkedCell) string {
	g := analysis.JudgeGrowth(x, y)
	if g.Verdict == analysis.GrowthNone {
		return ""
	}
	what := fmt.Sprintf("tps ×%.2f", x.TPS/y.TPS)
	if g.Differs == analysis.DiffersStalls {
		what = fmt.Sprintf("%d stall%s in %d repeat%s against %d in %d", x.Stalls, section.Plural(x.Stalls), x.Repeats, section.Plural(x.Repeats), y.Stalls, y.Repeats)
	}
	s := fmt.Sprintf("%s against %s: the table grew %s of its bytes in %.0f s (%s: %s)",
		p.Cell, p.Ref, pct(x.BytesGrew), x.Seconds, p.Ref, pct(y.BytesGrew))
	if x.HasRows && y.HasRows {
		s = fmt.Sprintf("%s against %s: the table grew %s of its rows (%.0f → %.0f; allocated bytes %s) in %.0f s (%s: rows %s, bytes %s)",
			p.Cell, p.Ref, pct(x.RowsGrew), x.RowsBefore, x.RowsAfter, pct(x.BytesGrew), x.Seconds, p.Ref, pct(y.RowsGrew), pct(y.BytesGrew))
	}
	switch g.Verdict {
	case analysis.GrowthIrrelevant:
		return s + ": nothing differs for it to explain"
	case analysis.GrowthSmall:
		return s + fmt.Sprintf(": too little to explain %s (a table under %.0f%% larger barely changes the working set or the index depth)", what, analysis.LinkedSmallGrowth*100)
	case analysis.GrowthAlike:
		return s + fmt.Sprintf(": both tables grew alike (within %.0f%%), so the growth does not explain %s", analysis.LinkedSmallGrowth*100, what)
	case analysis.GrowthFollows:
		per := fmt.Sprintf("%s vs %s %s per transaction", figure3(g.PerX), figure3(g.PerY), g.Unit)
		return s + fmt.Sprintf(": the table grew by about as much per transaction in both (%s), so the growth follows the throughput rather than explains %s", per, what)
	}
	return s + fmt.Sprintf(": large enough to take part in the difference (%s; more data to read, write and keep in the buffer pool per transaction)", what)
}

// pct is a signed share as "+1.0%".
func pct(v float64) string { return fmt.Sprintf("%+.1f%%", v*100) }

// figure3 prints a per-transaction figure with three significant digits
// (whole numbers from 100 up, never in e-notation).
func figure3(v float64) string {
	if math.Abs(v) >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
