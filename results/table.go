package results

import (
	"fmt"
	"io"
	"strings"

	"benchmatrix/analysis"
	"benchmatrix/record"
	"benchmatrix/section"
)

// ComparisonRows returns the comparison table's header and rows: one row
// per cell (medians over repeats) with tps, qps, latency and the tps ratio
// to the cell's baseline: the Conclusion's paired ratio with its 95 %
// interval when there is one (ratio.go).
func ComparisonRows(r *record.Run) ([]string, [][]string) {
	header := []string{"cell", "runs", "tps", "qps", "avg ms", "p95 ms", "p99 ms", "errors"}
	ratios := baselineRatios(r)
	if r.Baseline != "" {
		header = append(header, ratioHeading(r, ratios)) // ratio.go
	}
	sums := r.Summaries()
	var rows [][]string
	for _, s := range sums {
		runs := fmt.Sprintf("%d", s.Runs)
		if s.Failed > 0 {
			runs = fmt.Sprintf("%d (%d failed)", s.Runs, s.Failed)
		}
		row := []string{s.Name, runs}
		if s.Runs == 0 {
			row = append(row, "-", "-", "-", "-", "-", "-")
		} else {
			row = append(row, fmt.Sprintf("%.1f", s.TPS), fmt.Sprintf("%.1f", s.QPS), fmt.Sprintf("%.3f", s.LatAvg),
				fmt.Sprintf("%.3f", s.LatP95), fmt.Sprintf("%.3f", s.LatP99), fmt.Sprintf("%d", s.Errors))
		}
		if r.Baseline != "" {
			ratio := "-"
			if l := ratios[s.Name]; l != nil {
				ratio = RatioText(l.Ratio)
			} else if analysis.BaselineFor(r.Baseline, s, sums) == s.Name && s.Runs > 0 {
				ratio = "1.00x" // the baseline itself
			}
			row = append(row, ratio)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// WriteTable prints the comparison table for a terminal.
func WriteTable(w io.Writer, r *record.Run) error {
	header, rows := ComparisonRows(r)
	return section.Table(w, header, rows, section.Alignments(len(header)), false)
}

// pivotColumn is the parameter whose values become the pivot's columns:
// the run's choice ([experiment] pivot), else the scenario, else the last
// varying parameter.
func pivotColumn(r *record.Run) string {
	if r.Pivot != "" {
		return r.Pivot
	}
	for _, c := range r.Cells {
		if c.Scenario != "" {
			return "scenario"
		}
	}
	if n := len(r.Columns); n > 0 {
		return r.Columns[n-1]
	}
	return ""
}

func summaryValue(s record.Summary, name string) string {
	if name == "scenario" {
		return s.Scenario
	}
	for _, p := range s.Params {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// writePivot prints tps with one parameter's values as columns (see
// pivotColumn) and the other varying parameters as rows, with the ratio to
// the baseline scenario when the columns are scenarios. It says nothing when
// there is no second dimension.
func writePivot(w io.Writer, r *record.Run) error {
	colName := pivotColumn(r)
	if colName == "" {
		return nil
	}
	sums := r.Summaries()
	var cols, rowKeys []string
	seenC, seenR := map[string]bool{}, map[string]bool{}
	cell := map[string]record.Summary{}
	for _, s := range sums {
		cv := summaryValue(s, colName)
		var rest []string
		if colName != "scenario" && s.Scenario != "" {
			rest = append(rest, s.Scenario)
		}
		for _, p := range s.Params {
			if p.Name != colName && !isScenarioParam(r, s.Scenario, p.Name) {
				rest = append(rest, p.Name+"="+p.Value)
			}
		}
		rk := strings.Join(rest, " ")
		if !seenC[cv] {
			seenC[cv] = true
			cols = append(cols, cv)
		}
		if !seenR[rk] {
			seenR[rk] = true
			rowKeys = append(rowKeys, rk)
		}
		cell[cv+"\x00"+rk] = s
	}
	if len(cols) < 2 || len(rowKeys) < 2 {
		return nil // one dimension: the main table says it all
	}
	fmt.Fprintf(w, "\n### tps by %s\n\n", colName)
	header := append([]string{""}, cols...)
	var rows [][]string
	ratios := baselineRatios(r) // the Conclusion's paired ratios
	for _, rk := range rowKeys {
		row := []string{rk}
		for _, cv := range cols {
			s, ok := cell[cv+"\x00"+rk]
			l := ratios[s.Name]
			switch {
			case !ok || s.Runs == 0:
				row = append(row, "-")
			case colName == "scenario" && cv != r.Baseline && l != nil && l.Ratio.Rounds > 0:
				ratio := RatioText(l.Ratio)
				if f := l.Headline(); f.Name != "tps" {
					ratio = f.Label + " " + ratio // the tps cell, the ratio of the cells' headline
				}
				row = append(row, fmt.Sprintf("%.1f (%s)", s.TPS, ratio))
			default:
				row = append(row, fmt.Sprintf("%.1f", s.TPS))
			}
		}
		rows = append(rows, row)
	}
	return section.MarkdownTable(w, header, rows)
}

// isScenarioParam reports whether a parameter comes from the cell's
// scenario rather than an axis (it is then named by the scenario, not
// repeated in the pivot's row).
func isScenarioParam(r *record.Run, scenario, name string) bool {
	if scenario == "" {
		return false
	}
	for _, ax := range r.Axes {
		if ax == name {
			return false
		}
	}
	return true
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func indent(s, pre string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = pre + lines[i]
	}
	return strings.Join(lines, "\n")
}
