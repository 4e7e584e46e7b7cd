package results

import (
	"fmt"
	"io"
	"math"
	"strings"

	"benchmatrix/analysis"
	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/features"
	"benchmatrix/record"
	"benchmatrix/section"
)

// The Conclusion of a run: what a design review can paste. For each cell
// against its baseline cell, the ratio of tps estimated from the paired
// rounds (analysis/paired.go: Hodges-Lehmann on per-round log ratios, its
// distribution-free 95 % interval and the Wilcoxon signed-rank p), the
// mechanism in one line, the expectations held or broken, and every warning
// that undermines it.

// Conclusion is what summary.md opens with.
type Conclusion struct {
	Ratios       []analysis.RatioLine    `json:"ratios,omitempty"`
	Mechanism    map[string]string       `json:"mechanism,omitempty"` // cell → one line
	Linked       []string                `json:"linked,omitempty"`    // mechanism against outcome (linked.go)
	Expectations []analysis.ExpectResult `json:"expectations,omitempty"`
	Warnings     []string                `json:"warnings,omitempty"`
	// Nothing is set when no ratio is significant and no expectation held:
	// the run cannot support a conclusion.
	Nothing    bool   `json:"nothing"`
	NothingWhy string `json:"nothing_why,omitempty"`
}

// Broken lists the expectations broken with significance.
func (c *Conclusion) Broken() []analysis.ExpectResult {
	var out []analysis.ExpectResult
	for _, e := range c.Expectations {
		if e.Status == analysis.ExpectBroken {
			out = append(out, e)
		}
	}
	return out
}

// Conclude computes the Conclusion of a run.
func Conclude(r *record.Run) *Conclusion {
	c := &Conclusion{Mechanism: map[string]string{}}
	sums := r.Summaries()
	br := analysis.ByRepeat(r)
	med, _ := analysis.MechanismMedians(r)
	for _, s := range sums {
		if line := mechanismLine(med[s.Name]); line != "" {
			c.Mechanism[s.Name] = line
		}
	}
	var figureNotes []string
	c.Ratios, figureNotes = analysis.Ratios(r, br) // analysis/ratios.go
	minRounds := math.MaxInt
	significant := 0
	for _, l := range c.Ratios {
		minRounds = min(minRounds, l.Ratio.Rounds)
		if l.Ratio.P < analysis.Alpha {
			significant++
		}
	}
	c.Expectations = analysis.JudgeExpectations(r, br)
	c.Linked = linkedLines(r, c.Ratios) // linked.go: the mechanism against the outcome
	for _, f := range features.Reports {
		if f.Linked != nil {
			c.Linked = append(c.Linked, f.Linked(r)...) // the profiles' predictions
		}
	}
	analysis.DecideExpectations(c.Expectations, analysis.RoundsOf(r)) // analysis/expect.go: until = "conclusive"
	held := 0
	for _, e := range c.Expectations {
		if e.Status == analysis.ExpectHeld {
			held++
		}
	}

	// What undermines it.
	need := analysis.MinRoundsForRatioCI()
	// A conclusive run's ratios carry the rounds' confidence sequence
	// (analysis.Ratios), which needs no fixed number of rounds.
	if len(c.Ratios) > 0 && minRounds < need && analysis.RoundsOf(r) == nil {
		c.Warnings = append(c.Warnings, fmt.Sprintf("too few repeats: %d paired round%s; a 95%% interval for a ratio needs %d, and with %d the smallest possible p is %s (run with --repeats %d or more)",
			minRounds, section.Plural(minRounds), need, minRounds, analysis.FormatP(minSignedRankP(minRounds)), need))
	}
	c.Warnings = append(c.Warnings, figureNotes...)
	if r.Order == string(experiment.Blocked) {
		c.Warnings = append(c.Warnings, "order = \"blocked\": the repeats of each cell ran back to back, so round k of two cells was measured at different times; the pairing does not cancel drift, and a trend over repeats shows here as a difference")
	}
	var failed []string
	for _, x := range r.Cells {
		if x.Status != record.CellOK {
			failed = append(failed, fmt.Sprintf("%s (repeat %d)", x.Name, x.Repeat))
		}
	}
	if len(failed) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d failed cell run%s, left out of the pairs: %s", len(failed), section.Plural(len(failed)), strings.Join(failed, ", ")))
	}
	var contended []string
	_, cont := analysis.MechanismMedians(r)
	whyOf := map[string]string{}
	for _, x := range r.Cells {
		if x.Contention != nil && x.Contention.Contended && whyOf[x.Name] == "" {
			whyOf[x.Name] = x.Contention.Why
		}
	}
	for _, s := range sums {
		if n := cont[s.Name]; n[0] > 0 {
			contended = append(contended, fmt.Sprintf("%s in %d of %d repeats (e.g. %s)", s.Name, n[0], n[1], whyOf[s.Name]))
		}
	}
	if len(contended) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("measured under contention, other load on the host: %s", strings.Join(contended, "; ")))
	}
	var noisyHost []string
	for _, x := range r.Cells {
		if x.QuietWaitSeconds > 0 && !x.QuietReached {
			noisyHost = append(noisyHost, fmt.Sprintf("%s (repeat %d, waited %.0f s)", x.Name, x.Repeat, x.QuietWaitSeconds))
		}
	}
	if len(noisyHost) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("wait_quiet: the host did not become quiet before %s", strings.Join(noisyHost, ", ")))
	}
	in := section.Conclusion{Run: r, ByRepeat: br}
	for _, l := range c.Ratios {
		in.Pairs = append(in.Pairs, section.Pair{Cell: l.Cell, Baseline: l.Baseline})
	}
	c.Warnings = append(c.Warnings, featureWarnings(in, "wait_quiet")...) // the features' (limits that never bound)
	c.Warnings = append(c.Warnings, dataWarnings(r)...)                   // steady.go: data that fits on a small machine
	c.Warnings = append(c.Warnings, featureWarnings(in, "data")...)       // the features' (a capacity search that missed)
	var stalled []string
	for _, x := range r.Cells {
		if x.Stalls != nil && x.Stalls.Count > 0 {
			stalled = append(stalled, fmt.Sprintf("%s (repeat %d: %s%s%s)", x.Name, x.Repeat, x.Stalls.Text, stallCauseBrief(x.StallCauses), nodeMovers(x.StallEvidence)))
		}
	}
	if len(stalled) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("stalls in the measured window: %s", strings.Join(stalled, "; ")))
	}
	var noisy []string
	for _, s := range CellStats(r) {
		if s.Noisy {
			noisy = append(noisy, fmt.Sprintf("%s (%s)", s.Name, s.Why))
		}
	}
	switch {
	case len(noisy) == 1:
		c.Warnings = append(c.Warnings, strings.Replace(noisy[0], " (", " is noisy (", 1))
	case len(noisy) > 1:
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d cells are noisy: %s", len(noisy), strings.Join(noisy, ", ")))
	}
	// The repeats' trends, judged together against each round's contention
	// and the cells restarted cold (trend.go).
	for _, t := range cellTrends(r) {
		if t.Trend.P < analysis.Alpha {
			dir := "rose"
			if t.Trend.S < 0 {
				dir = "fell"
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: tps %s over the repeats in the order they ran (Mann-Kendall τ=%+.2f, p=%s): an order effect, not noise",
				t.Name, dir, t.Trend.Tau, analysis.FormatP(t.Trend.P)))
		}
	}
	if j, ok := analysis.JudgeRepeats(r); ok {
		c.Warnings = append(c.Warnings, "repeats: "+repeatsText(j))
	}
	c.Warnings = append(c.Warnings, featureWarnings(in, "repeats")...) // the features' (a merged run's machines)
	// The most important first: a broken expectation leads the list.
	var broken []string
	for _, e := range c.Broken() {
		g := ""
		if e.Group != "" {
			g = " at " + e.Group
		}
		broken = append(broken, fmt.Sprintf("expectation broken%s: %s (%s)", g, e.Text, e.Detail))
	}
	c.Warnings = append(broken, c.Warnings...)
	switch {
	case r.Baseline == "" && len(c.Expectations) == 0:
		c.Nothing, c.NothingWhy = true, "no baseline to compare with: set [experiment] baseline (or expect) to get ratios with their confidence"
	case significant == 0 && held == 0:
		c.Nothing = true
		c.NothingWhy = "no difference is significant at p < 0.05"
		if len(c.Ratios) > 0 && minRounds < 6 {
			c.NothingWhy += fmt.Sprintf(" (with %d paired round%s it cannot be: see the warnings)", minRounds, section.Plural(minRounds))
		}
	}
	return c
}

// featureWarnings are the features' warnings that follow results' own
// group named after (features.Reports).
func featureWarnings(in section.Conclusion, after string) []string {
	var out []string
	for _, f := range features.Reports {
		for _, w := range f.Warnings {
			if w.After == after {
				out = append(out, w.Lines(in)...)
			}
		}
	}
	return out
}

// minSignedRankP is the smallest two-sided p of the signed-rank test with
// n pairs: all of one sign, 2/2^n.
func minSignedRankP(n int) float64 {
	if n < 1 {
		return 1
	}
	return math.Min(1, 2/math.Pow(2, float64(n)))
}

// ratioSentence is "b0e1: 2.03x b1e1 (95% CI 1.91–2.15, p=0.031, better in
// 6 of 6 rounds)".
func ratioSentence(l analysis.RatioLine) string {
	pr := l.Ratio
	if pr.Rounds == 0 {
		return fmt.Sprintf("%s: no round in which both it and %s finished", l.Cell, l.Baseline)
	}
	ci := fmt.Sprintf("95%% CI %.2f–%.2f", pr.Lo, pr.Hi)
	if !pr.CIOK {
		ci = fmt.Sprintf("no 95%% CI from %d round%s", pr.Rounds, section.Plural(pr.Rounds))
	}
	sig := ""
	if pr.P < analysis.Alpha {
		sig = ", significant"
	}
	better := "better"
	if !l.Headline().HigherIsBetter {
		better = "higher" // the ratio's direction, not an improvement
	}
	return fmt.Sprintf("%s: **%.2fx** %s %s (%s, p=%s%s, %s in %d of %d rounds)",
		l.Cell, pr.Ratio, l.Baseline, l.Headline().Label, ci, analysis.FormatP(pr.P), sig, better, pr.Above, pr.Rounds)
}

// ratiosFigure is the label of the figure every line is on ("tps",
// "NOPM"), or "" when they are on different figures.
func ratiosFigure(ls []analysis.RatioLine) string {
	label := ""
	for i, l := range ls {
		if i > 0 && l.Headline().Label != label {
			return ""
		}
		label = l.Headline().Label
	}
	return label
}

// WriteConclusion writes the Conclusion section (Markdown).
func WriteConclusion(w io.Writer, r *record.Run) {
	c := Conclude(r)
	fmt.Fprintf(w, "## Conclusion\n\n")
	writeRounds(w, r, c) // rounds.go: until = "conclusive"
	if c.Nothing {
		fmt.Fprintf(w, "**Nothing can be concluded from this run:** %s.\n\n", c.NothingWhy)
	}
	// A conclusive run's decisions above give each ratio with the interval
	// valid under its repeated looks; the fixed-rounds lines would repeat
	// them with another interval.
	decided := false
	if rec := analysis.RoundsOf(r); rec != nil && len(rec.Decisions) > 0 {
		decided = true
	}
	for _, l := range c.Ratios {
		if !decided {
			fmt.Fprintf(w, "- %s\n", ratioSentence(l))
		}
	}
	if len(c.Ratios) > 0 && !decided {
		of := "the per-round ratios of each line's figure"
		if f := ratiosFigure(c.Ratios); f != "" {
			of = "the per-round " + f + " ratios"
		}
		fmt.Fprintf(w, "\nThe ratio is the Hodges-Lehmann estimate over %s of the paired rounds (each round runs every cell once); "+
			"the 95%% interval is distribution-free (from the Wilcoxon signed-rank distribution, needs ≥%d rounds) and p is the two-sided Wilcoxon signed-rank test of the per-round log ratios.\n\n",
			of, analysis.MinRoundsForRatioCI())
	}
	for _, f := range features.Reports {
		if f.Paragraph != nil {
			f.Paragraph(w, r) // a merged run's machines
		}
	}
	if len(c.Expectations) > 0 {
		fmt.Fprintf(w, "Expectations (paired test, p < 0.05):\n\n")
		for _, e := range c.Expectations {
			g := ""
			if e.Group != "" {
				g = " at " + e.Group
			}
			fmt.Fprintf(w, "- `%s`%s: **%s** (%s)\n", e.Text, g, e.Status, e.Detail)
		}
		fmt.Fprintln(w)
	}
	var names []string
	for _, s := range r.Summaries() {
		if _, ok := c.Mechanism[s.Name]; ok {
			names = append(names, s.Name)
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(w, "Mechanism (medians over the repeats):\n\n")
		for _, n := range names {
			fmt.Fprintf(w, "- %s: %s\n", n, c.Mechanism[n])
		}
		fmt.Fprintln(w)
	}
	if len(c.Linked) > 0 {
		fmt.Fprintf(w, "Mechanism and outcome:\n\n")
		for _, s := range c.Linked {
			fmt.Fprintf(w, "- %s\n", s)
		}
		fmt.Fprintln(w)
	}
	if len(c.Warnings) > 0 {
		fmt.Fprintf(w, "What undermines it:\n\n")
		for _, s := range c.Warnings {
			fmt.Fprintf(w, "- %s\n", s)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "Nothing found that undermines it (no failed cell, stall, contention, trend or broken expectation).\n\n")
	}
}

// cellTrend is a cell's tps over its repeats in run order.
type cellTrend struct {
	Name  string
	Trend analysis.Trend
}

// cellTrends runs the Mann-Kendall test on each cell's tps in the order its
// repeats ran.
func cellTrends(r *record.Run) []cellTrend {
	var out []cellTrend
	for _, s := range tpsByRepeat(r) {
		out = append(out, cellTrend{Name: s.name, Trend: analysis.MannKendall(s.tps)})
	}
	return out
}

// repeatSeries is one cell's tps per successful repeat, in run order.
type repeatSeries struct {
	name string
	tps  []float64
}

// tpsByRepeat is every cell's tps over its successful repeats in the order
// they ran (by index), cells in run order.
func tpsByRepeat(r *record.Run) []repeatSeries {
	var out []repeatSeries
	for _, c := range analysis.CellRepeatRuns(r) { // analysis/trend.go
		out = append(out, repeatSeries{name: c.Name, tps: c.TPS()})
	}
	return out
}

// ExpectationError is run --check's failure: expectations broken with
// significance. Its exit code is 3, like a regression found by compare.
type ExpectationError struct {
	Broken []analysis.ExpectResult
}

func (e *ExpectationError) Error() string {
	var parts []string
	for _, b := range e.Broken {
		g := ""
		if b.Group != "" {
			g = " at " + b.Group
		}
		parts = append(parts, fmt.Sprintf("%q%s (%s)", b.Text, g, b.Detail))
	}
	return fmt.Sprintf("%d expectation%s broken at p<0.05: %s", len(e.Broken), section.Plural(len(e.Broken)), strings.Join(parts, "; "))
}

// ExitCode implements exitcode.Coder.
func (e *ExpectationError) ExitCode() int { return exitcode.Regression }

// CheckExpectations is run --check: an *ExpectationError when an
// expectation of the run's manifest is broken with significance, else nil.
func CheckExpectations(r *record.Run) error {
	if r == nil {
		return nil
	}
	if b := Conclude(r).Broken(); len(b) > 0 {
		return &ExpectationError{Broken: b}
	}
	return nil
}

// stallCauseBrief is a cell's stall causes in one clause for the
// Conclusion: the first stall's that names one, and how many did.
func stallCauseBrief(causes []string) string {
	if len(causes) == 0 {
		return ""
	}
	var named []string
	for _, c := range causes {
		if strings.Contains(c, "likely cause:") {
			named = append(named, c)
		}
	}
	switch {
	case len(named) == 0:
		return "; cause not visible in the sampled counters"
	case len(causes) == 1:
		return "; " + named[0]
	}
	return fmt.Sprintf("; %d of %d with a likely cause, e.g. %s", len(named), len(causes), named[0])
}

// nodeMovers names, for the Conclusion, the node columns of a cluster that
// moved at the stall onsets (the first three, strongest first): on a
// cluster they are the question ("which member, doing what"); "" on one
// server, whose movers are in the cell's notes.
func nodeMovers(evidence []string) string {
	var out []string
	for _, e := range evidence {
		if strings.HasPrefix(e, "node") && strings.Contains(e, ".") && len(out) < 3 {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; at the onsets: " + strings.Join(out, ", ")
}
