package results

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/record"
)

// setTPS gives cell name tps[k] in repeat k+1.
func setTPS(r *record.Run, name string, tps []float64) {
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Name == name {
			c.Result.Events = int64(tps[c.Repeat-1] * c.Result.Elapsed.Seconds())
			c.Result.Writes = c.Result.Events
		}
	}
}

// One comparison, one number (issue 26): the ratio of b0e1/threads=1 to
// its baseline b1e1/threads=1 is the same in summary.md's Conclusion, its
// Results table and pivot, the tps plot's label and compare's within-run
// line. The host drifts over the rounds, so the paired ratio (1.16x) and
// the ratio of the medians (1.13x) differ: a writer dividing medians fails.
func TestOneRatioEverywhere(t *testing.T) {
	t.Parallel()
	r := synthRun(1, 6, flushCells())
	r.Axes = []string{"threads"} // for the pivot "tps by scenario"
	base := []float64{100, 200, 300, 400, 500, 600}
	setTPS(r, "b1e1/threads=1", base)
	setTPS(r, "b0e1/threads=1", []float64{130, 240, 330, 460, 520, 690})
	const cell, baseline = "b0e1/threads=1", "b1e1/threads=1"

	pr := baselineRatios(r)[cell].Ratio
	medians := 395.0 / 350.0
	if !pr.CIOK || fmt.Sprintf("%.2f", pr.Ratio) == fmt.Sprintf("%.2f", medians) {
		t.Fatalf("test data: paired ratio %+v should differ from the ratio of medians %.2f and have an interval", pr, medians)
	}
	want := RatioText(pr) // "1.16x (1.10-1.22)"

	var md bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	summary := md.String()
	conclusion := fmt.Sprintf("%s: **%.2fx** %s tps (95%% CI %.2f–%.2f", cell, pr.Ratio, baseline, pr.Lo, pr.Hi)
	if !strings.Contains(summary, conclusion) {
		t.Errorf("summary.md's Conclusion lacks %q:\n%s", conclusion, summary)
	}
	header, rows := ComparisonRows(r)
	col := len(header) - 1
	if header[col] != "tps vs b1e1" {
		t.Fatalf("header %q", header)
	}
	found := false
	for _, row := range rows {
		if row[0] == cell {
			found = true
			if row[col] != want {
				t.Errorf("Results table: %s %q, want %q (the Conclusion's)", cell, row[col], want)
			}
			if !regexp.MustCompile(`\|\s*` + regexp.QuoteMeta(want) + `\s*\|`).MatchString(summary) {
				t.Errorf("summary.md's Results table lacks %q", want)
			}
		}
	}
	if !found {
		t.Fatalf("no row %s in %q", cell, rows)
	}
	if !strings.Contains(summary, fmt.Sprintf("(%s)", want)) {
		t.Errorf("summary.md's pivot lacks (%s):\n%s", want, summary)
	}
	bars, names, _, _ := headlineBars(r, newPalette(r), analysis.RunFigure(r))
	for i, n := range names {
		if n == cell {
			if l := bars.bars[i].label(); !strings.Contains(l, want+" vs "+baseline) {
				t.Errorf("tps plot label %q lacks %q", l, want)
			}
		}
	}
	// compare: the within-run ratio of both runs is the Conclusion's.
	other := synthRun(2, 6, flushCells())
	other.Started = other.Started.Add(time.Hour)
	c := mustCompare(t, other, r, DefaultCompareOptions())
	var out bytes.Buffer
	if err := WriteComparison(&out, c, false); err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("- %s\n  - tps vs %s within each run (paired rounds, as in summary.md): base %s, new %s",
		cell, baseline, RatioText(baselineRatios(other)[cell].Ratio), want)
	if !strings.Contains(out.String(), line) {
		t.Errorf("compare lacks %q:\n%s", line, out.String())
	}
	if !strings.Contains(out.String(), "delta is new vs base: the change of the median, unpaired") {
		t.Errorf("compare does not label its own estimate:\n%s", out.String())
	}
}
