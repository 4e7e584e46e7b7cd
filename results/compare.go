package results

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter/tw"

	"benchmatrix/analysis"
	"benchmatrix/engine"
	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/features"
	"benchmatrix/record"
	"benchmatrix/section"
)

// Defaults of a comparison.
const (
	DefaultThreshold = 5.0  // percent
	DefaultAlpha     = 0.05 // significance level of the U test
)

// CompareOptions says when a change counts.
type CompareOptions struct {
	// Threshold is the smallest worsening, in percent of the base median,
	// that counts as a regression when it is also significant. It is used
	// as given: 0 makes any significant worsening a regression. Start from
	// DefaultCompareOptions for the default of 5 %.
	Threshold float64 `json:"threshold_pct"`
	// AllowMismatch compares runs whose fingerprints differ instead of
	// refusing with a *MismatchError; the comparison carries the
	// differences and its table marks the cells they concern.
	AllowMismatch bool `json:"allow_mismatch"`
	// Alpha is the significance level; 0 means DefaultAlpha.
	Alpha float64 `json:"alpha"`
}

// DefaultCompareOptions returns a 5 % threshold at α = 0.05.
func DefaultCompareOptions() CompareOptions {
	return CompareOptions{Threshold: DefaultThreshold, Alpha: DefaultAlpha}
}

// Verdicts of a metric comparison.
const (
	Better    = "better"
	Worse     = "worse"
	Unchanged = "~" // no significant change
)

// metric is a figure compared across runs.
type metric struct {
	name           string
	unit           string
	higherIsBetter bool
	value          func(*record.Cell) float64
	// has tells whether a cell has the figure (a capacity only where the
	// cell had a latency target).
	has func(*record.Cell) bool
}

// compareMetrics are record.Columns' entries with a Compare name, in its
// order: figures of the engine's result.
var compareMetrics = func() []metric {
	var out []metric
	for _, col := range record.Columns {
		if col.Compare == "" {
			continue
		}
		out = append(out, metric{col.Compare, col.Unit, col.HigherIsBetter, func(c *record.Cell) float64 {
			v, _ := col.Value(c)
			return v
		}, func(c *record.Cell) bool {
			_, ok := col.Value(c)
			return ok
		}})
	}
	return out
}()

// Comparison is the outcome of comparing a new run with a base run, cell by
// cell.
type Comparison struct {
	// newRun is the new run, for its own Conclusion under --markdown.
	newRun  *record.Run
	Base    RunRef         `json:"base"`
	New     RunRef         `json:"new"`
	Options CompareOptions `json:"options"` // as applied (defaults filled in)
	// Cells are the cells both runs have, in the base run's order.
	Cells []CellComparison `json:"cells"`
	// Unmatched are the cells only one run has (by name: scenario and axis
	// values).
	Unmatched []Unmatched `json:"unmatched,omitempty"`
	// RunChanges are the differences that concern every cell (the
	// server's flavor or version): "server version 10.11.6 -> 11.4.2".
	RunChanges []string `json:"run_changes,omitempty"`
	// Mismatches are the fingerprint differences; only a forced comparison
	// (AllowMismatch) has any.
	Mismatches []record.Mismatch `json:"mismatches,omitempty"`
	// EnvDiffs are differences of host, tool and manifest text: worth
	// knowing, not a reason to refuse.
	EnvDiffs []record.Mismatch `json:"env_diffs,omitempty"`
	// Warnings are about the comparison's power and the data's quality.
	Warnings []string `json:"warnings,omitempty"`
}

// RunRef identifies a compared run.
type RunRef struct {
	Experiment string    `json:"experiment"`
	Started    time.Time `json:"started"`
	Server     string    `json:"server"` // flavor and version
	Tool       string    `json:"tool"`   // version and commit
}

// CellComparison compares one cell's repeats in both runs.
type CellComparison struct {
	Name     string             `json:"name"`
	Scenario string             `json:"scenario,omitempty"`
	Params   []experiment.Param `json:"params"`
	// Mismatched tells whether a fingerprint difference concerns the cell.
	Mismatched bool `json:"mismatched,omitempty"`
	// Changes are the settings, parameters and limits that differ between
	// the runs for this cell: "sync_binlog 0 -> 1" (compare_host.go).
	Changes []string `json:"changes,omitempty"`
	// BaseHost and NewHost are what else used the host while each run
	// measured the cell.
	BaseHost HostLoad `json:"base_host"`
	NewHost  HostLoad `json:"new_host"`
	// Contention says how the runs' contention differed for this cell
	// ("measured under contention in the new run only"); "" when neither
	// run was contended.
	Contention string `json:"contention,omitempty"`
	// BaseRatio and NewRatio are the cell's headline figure (tps; NOPM for
	// tpcc: analysis/headline.go) against its baseline cell within each run: the paired ratio of the run's Conclusion (nil for a
	// baseline cell or a run without a baseline).
	BaseRatio *analysis.RatioLine `json:"base_ratio,omitempty"`
	NewRatio  *analysis.RatioLine `json:"new_ratio,omitempty"`
	Metrics   []MetricComparison  `json:"metrics"`
}

// MetricComparison compares one figure of one cell.
type MetricComparison struct {
	Metric         string `json:"metric"` // tps, p95, p99
	Unit           string `json:"unit"`
	HigherIsBetter bool   `json:"higher_is_better"`
	// Base and New are the medians over the successful repeats with their
	// 95 % confidence intervals.
	Base analysis.MedianInterval `json:"base"`
	New  analysis.MedianInterval `json:"new"`
	// CoV of each side in percent (NaN below two repeats).
	BaseCoV float64 `json:"base_cov_pct"`
	NewCoV  float64 `json:"new_cov_pct"`
	// DeltaPct is the change of the median in percent of the base median;
	// NaN when the base median is 0 or a side has no repeats.
	DeltaPct float64 `json:"delta_pct"`
	// P is the two-sided Mann-Whitney U p-value; NaN when not tested.
	P float64 `json:"p"`
	// Verdict is Better or Worse when the change is significant (P <
	// alpha), else Unchanged.
	Verdict string `json:"verdict"`
	// Regression is a significant worsening larger than the threshold
	// that counts: measured on a host equally quiet in both runs, or
	// surviving the contention (compare_host.go).
	Regression bool `json:"regression"`
	// ContendedSide is where the cell was measured under contention:
	// "base", "new", "both" or "".
	ContendedSide string `json:"contended_side,omitempty"`
	// Discounted is a significant worsening larger than the threshold that
	// does not count: measured under contention in one run only, and it
	// does not survive the contention. HostNote says how it was judged.
	Discounted bool     `json:"discounted,omitempty"`
	HostNote   string   `json:"host_note,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

// Unmatched is a cell that only one of the runs has.
type Unmatched struct {
	Name   string             `json:"name"`
	Side   string             `json:"side"` // "base" or "new"
	Params []experiment.Param `json:"params"`
	Reason string             `json:"reason"`
}

// Compare compares the new run with the base run: cells are matched by name
// (scenario and axis values), and each metric's medians over the successful
// repeats are compared with the Mann-Whitney U test. A cell whose settings,
// parameters or limits changed is compared like any other, its changes
// listed beside it (Changes): a slowdown is a regression. When what is
// measured differs (the workload, its options, the engine) it returns a
// *MismatchError unless opt.AllowMismatch; server, host and tool
// differences are listed (EnvDiffs) and compared. A worsening measured under
// contention in one run only counts when it survives the contention
// (compare_host.go). Runs with no cell in common are a
// *NothingInCommonError: a CI gate pointed at the wrong directories fails.
func Compare(base, new *record.Run, opt CompareOptions) (*Comparison, error) {
	if base == nil || new == nil {
		return nil, errors.New("compare: missing run")
	}
	if opt.Alpha == 0 {
		opt.Alpha = DefaultAlpha
	}
	if !(opt.Alpha > 0 && opt.Alpha < 1) {
		return nil, fmt.Errorf("compare: alpha %g: want a level between 0 and 1", opt.Alpha)
	}
	if opt.Threshold < 0 || math.IsNaN(opt.Threshold) {
		return nil, fmt.Errorf("compare: threshold %g%%: want 0 or more", opt.Threshold)
	}

	bf, nf := base.Fingerprint, new.Fingerprint
	if bf == nil {
		bf = ComputeFingerprint(base)
	}
	if nf == nil {
		nf = ComputeFingerprint(new)
	}
	mismatches := bf.Diff(nf)
	if len(mismatches) > 0 && !opt.AllowMismatch {
		return nil, &MismatchError{Mismatches: mismatches}
	}

	c := &Comparison{
		Base:       runRef(base),
		New:        runRef(new),
		Options:    opt,
		Mismatches: mismatches,
		EnvDiffs:   bf.EnvDiff(nf),
		RunChanges: runChanges(base, new),
		newRun:     new,
	}
	bLimits, nLimits := planLimits(base), planLimits(new)         // fingerprint.go
	bRatios, nRatios := baselineRatios(base), baselineRatios(new) // ratio.go
	bg, ng := groupCells(base), groupCells(new)
	mismatched := map[string]bool{}
	for _, m := range mismatches {
		mismatched[m.Cell] = true
	}

	var fewRepeats []string
	failedNotes := []string{}
	ciMissing := false
	for _, g := range bg.order {
		b := bg.groups[g]
		n, ok := ng.groups[g]
		if !ok {
			c.Unmatched = append(c.Unmatched, unmatched(b, "base"))
			continue
		}
		cc := CellComparison{Name: b.name, Scenario: b.scenario, Params: n.params, Mismatched: mismatched[b.name],
			Changes: cellChanges(b, n, bLimits, nLimits), BaseRatio: bRatios[b.name], NewRatio: nRatios[b.name]}
		for _, m := range compareMetrics {
			if !anyHas(m, b.cells) && !anyHas(m, n.cells) {
				// A figure neither run has for the cell (capacity without a
				// target). Such figures come last in record.Columns, so
				// the metrics before them keep their positions.
				continue
			}
			mc := compareMetric(m, b.cells, n.cells, opt)
			ciMissing = ciMissing || !mc.Base.OK || !mc.New.OK
			cc.Metrics = append(cc.Metrics, mc)
		}
		nb, nn := len(b.ok), len(n.ok)
		if nb > 0 && nn > 0 && analysis.UTestMinP(nb, nn) >= opt.Alpha {
			fewRepeats = append(fewRepeats, fmt.Sprintf("%s (%d vs %d)", b.name, nb, nn))
		}
		if b.failed > 0 {
			failedNotes = append(failedNotes, fmt.Sprintf("%s: %d of %d base repeats failed and are left out", b.name, b.failed, b.failed+nb))
		}
		if n.failed > 0 {
			failedNotes = append(failedNotes, fmt.Sprintf("%s: %d of %d new repeats failed and are left out", b.name, n.failed, n.failed+nn))
		}
		c.Cells = append(c.Cells, cc)
	}
	for _, g := range ng.order {
		if _, ok := bg.groups[g]; !ok {
			c.Unmatched = append(c.Unmatched, unmatched(ng.groups[g], "new"))
		}
	}
	if len(c.Cells) == 0 {
		return nil, &NothingInCommonError{Base: base.Experiment, New: new.Experiment, BaseCells: len(bg.order), NewCells: len(ng.order)}
	}
	judgeHost(c, bg, ng, opt) // compare_host.go

	if len(fewRepeats) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("too few repeats to detect a change (need ≥%d each for p<%g): %s",
			analysis.MinRepeatsToDetect(opt.Alpha), opt.Alpha, strings.Join(fewRepeats, ", ")))
	}
	if ciMissing {
		c.Warnings = append(c.Warnings, fmt.Sprintf("a 95%% confidence interval of the median needs ≥%d repeats; medians with fewer are shown without one",
			analysis.MinSamplesForCI(analysis.Confidence)))
	}
	c.Warnings = append(c.Warnings, failedNotes...)
	for _, cc := range c.Cells {
		for _, mc := range cc.Metrics {
			for _, w := range mc.Warnings {
				c.Warnings = append(c.Warnings, cc.Name+" "+mc.Metric+": "+w)
			}
		}
	}
	for _, f := range features.Reports {
		if f.CompareWarnings != nil {
			c.Warnings = append(c.Warnings, f.CompareWarnings(base, new)...) // a merged run's machines
		}
	}
	if len(c.Cells) == 0 {
		c.Warnings = append(c.Warnings, "the runs have no cell in common")
	}
	return c, nil
}

func compareMetric(m metric, base, new []*record.Cell, opt CompareOptions) MetricComparison {
	bv, nv := values(base, m.value), values(new, m.value)
	mc := MetricComparison{
		Metric: m.name, Unit: m.unit, HigherIsBetter: m.higherIsBetter,
		Base: analysis.MedianCI(bv, analysis.Confidence), New: analysis.MedianCI(nv, analysis.Confidence),
		BaseCoV: analysis.CoV(bv), NewCoV: analysis.CoV(nv),
		DeltaPct: math.NaN(), P: math.NaN(), Verdict: Unchanged,
	}
	switch {
	case len(bv) == 0 && len(nv) == 0:
		mc.Warnings = append(mc.Warnings, "no successful repeats in either run")
		return mc
	case len(bv) == 0:
		mc.Warnings = append(mc.Warnings, "no successful repeats in the base run")
		return mc
	case len(nv) == 0:
		mc.Warnings = append(mc.Warnings, "no successful repeats in the new run")
		return mc
	}
	if mc.Base.Median != 0 {
		mc.DeltaPct = (mc.New.Median - mc.Base.Median) / math.Abs(mc.Base.Median) * 100
	}
	u, err := analysis.MannWhitneyU(bv, nv)
	if err != nil {
		return mc
	}
	mc.P = u.P
	if u.P < opt.Alpha && mc.New.Median != mc.Base.Median {
		improved := (mc.New.Median > mc.Base.Median) == m.higherIsBetter
		mc.Verdict = Worse
		if improved {
			mc.Verdict = Better
		}
		mc.Regression = !improved && math.Abs(mc.DeltaPct) > opt.Threshold
	}
	// reference/anchors.md §3.4: a noisy cell is inconclusive, not unchanged.
	if mc.Verdict == Unchanged && len(bv) > 1 && len(nv) > 1 {
		if cov := math.Max(mc.BaseCoV, mc.NewCoV); cov > math.Max(opt.Threshold, math.Abs(mc.DeltaPct)) {
			mc.Warnings = append(mc.Warnings, fmt.Sprintf("inconclusive: CoV %.1f%% is larger than the change tested for", cov))
		}
	}
	return mc
}

func values(cs []*record.Cell, f func(*record.Cell) float64) []float64 {
	out := make([]float64, len(cs))
	for i, c := range cs {
		out[i] = f(c)
	}
	return out
}

// anyHas tells whether any of the cells has the metric's figure.
func anyHas(m metric, cs []*record.Cell) bool {
	for _, c := range cs {
		if m.has(c) {
			return true
		}
	}
	return false
}

// cellGroup is one cell's repeats in one run.
type cellGroup struct {
	name     string
	scenario string
	params   []experiment.Param
	ok       []*engine.Result
	cells    []*record.Cell // the successful repeats, aligned with ok
	all      []*record.Cell // every repeat
	failed   int
}

// effective is the server variables the cell's first repeat with a
// read-back found.
func (g *cellGroup) effective() map[string]string {
	for _, c := range g.all {
		if len(c.Effective) > 0 {
			return c.Effective
		}
	}
	return nil
}

type cellGroups struct {
	order  []string // group keys in run order
	groups map[string]*cellGroup
	names  map[string][]string // cell name → group keys
}

// byName is the group of the cell named name, or nil.
func (gs cellGroups) byName(name string) *cellGroup {
	if keys := gs.names[name]; len(keys) > 0 {
		return gs.groups[keys[0]]
	}
	return nil
}

// groupCells groups a run's cells by name: the scenario and the axis
// values. What a scenario sets may differ between runs; it is compared.
func groupCells(r *record.Run) cellGroups {
	gs := cellGroups{groups: map[string]*cellGroup{}, names: map[string][]string{}}
	for i := range r.Cells {
		c := &r.Cells[i]
		key := c.Name
		g, ok := gs.groups[key]
		if !ok {
			g = &cellGroup{name: c.Name, scenario: c.Scenario, params: c.Params}
			gs.groups[key] = g
			gs.order = append(gs.order, key)
			gs.names[c.Name] = append(gs.names[c.Name], key)
		}
		g.all = append(g.all, c)
		if c.Status == record.CellOK && c.Result != nil {
			g.ok = append(g.ok, c.Result)
			g.cells = append(g.cells, c)
		} else {
			g.failed++
		}
	}
	return gs
}

func unmatched(g *cellGroup, side string) Unmatched {
	return Unmatched{Name: g.name, Side: side, Params: g.params, Reason: "only in the " + side + " run"}
}

func runRef(r *record.Run) RunRef {
	ref := RunRef{Experiment: r.Experiment, Started: r.Started}
	ref.Server = strings.TrimSpace(string(r.Server.Flavor) + " " + r.Server.Version)
	ref.Tool = strings.TrimSpace(r.Tool.Name + " " + r.Tool.Version)
	if r.Tool.Commit != "" {
		ref.Tool += " (" + r.Tool.Commit + ")"
	}
	return ref
}

// Regressed returns the names of the cells with a regression, in order.
func (c *Comparison) Regressed() []string {
	var out []string
	for _, cc := range c.Cells {
		for _, mc := range cc.Metrics {
			if mc.Regression {
				out = append(out, cc.Name)
				break
			}
		}
	}
	return out
}

// VerdictLine sums the comparison up in one line: "No regressions ..." or
// "2 regressions: b1e1/threads=8 tps -12.3% (p=0.008), ...".
func (c *Comparison) VerdictLine() string {
	var regs []string
	var discCells []string
	disc := 0
	sides := map[string]bool{}
	var changedOrder []string
	changedCells := map[string][]string{} // change text → cells
	for _, cc := range c.Cells {
		changes := cc.Changes
		if len(changes) == 0 {
			changes = c.RunChanges
		}
		regressed, discounted := false, false
		for _, mc := range cc.Metrics {
			switch {
			case mc.Regression:
				regs = append(regs, fmt.Sprintf("%s %s %s (p=%s)", cc.Name, mc.Metric, formatDelta(mc.DeltaPct), analysis.FormatP(mc.P)))
				regressed = true
			case mc.Discounted:
				disc++
				discounted = true
				sides[mc.ContendedSide] = true
			}
		}
		if discounted {
			discCells = append(discCells, cc.Name)
		}
		if regressed && len(changes) > 0 {
			k := strings.Join(changes, ", ")
			if _, ok := changedCells[k]; !ok {
				changedOrder = append(changedOrder, k)
			}
			changedCells[k] = append(changedCells[k], cc.Name)
		}
	}
	crit := fmt.Sprintf("worse by more than %g%% at p<%g", c.Options.Threshold, c.Options.Alpha)
	tail := ""
	if len(changedOrder) > 0 {
		var parts []string
		for _, k := range changedOrder {
			parts = append(parts, strings.Join(changedCells[k], ", ")+": "+k)
		}
		tail += " What changed there: " + strings.Join(parts, "; ") + "."
	}
	if disc > 0 {
		var ss []string
		for _, sd := range []string{"new", "base", "both"} {
			if sides[sd] {
				ss = append(ss, map[string]string{"new": "more in the new run", "base": "more in the base run", "both": "in both runs alike"}[sd])
			}
		}
		tail += fmt.Sprintf(" Not counted: %d worse figure%s in %s, measured under contention (%s) and not surviving it (see the cells below); rerun on a quiet host (or with wait_quiet) to decide.",
			disc, section.Plural(disc), strings.Join(discCells, ", "), strings.Join(ss, ", "))
	}
	if len(regs) == 0 {
		return fmt.Sprintf("No regressions (%s).%s", crit, tail)
	}
	noun := "regressions"
	if len(regs) == 1 {
		noun = "regression"
	}
	return fmt.Sprintf("%d %s (%s): %s.%s", len(regs), noun, crit, strings.Join(regs, ", "), tail)
}

// ComparisonTable returns the comparison's header and rows: one row per
// matched cell and metric.
func ComparisonTable(c *Comparison) ([]string, [][]string) {
	header := []string{"cell", "metric", "base", "new", "delta", "p", "n", "verdict"}
	var rows [][]string
	for _, cc := range c.Cells {
		name := cc.Name
		if cc.Mismatched {
			name += " (!)"
		}
		for _, mc := range cc.Metrics {
			label := mc.Metric
			if mc.Unit != mc.Metric {
				label += " " + mc.Unit
			}
			rows = append(rows, []string{
				name, label,
				formatMedian(mc.Base, mc.Unit), formatMedian(mc.New, mc.Unit),
				formatDelta(mc.DeltaPct), analysis.FormatP(mc.P),
				fmt.Sprintf("%d/%d", mc.Base.N, mc.New.N),
				verdictText(mc),
			})
		}
	}
	return header, rows
}

func verdictText(mc MetricComparison) string {
	switch {
	case mc.Regression:
		return "REGRESSION"
	case mc.Discounted:
		return "worse, contended " + mc.ContendedSide
	}
	return mc.Verdict
}

// formatMedian is the median and, when there is one, the half-width of its
// confidence interval in percent (the wider side), as benchstat shows it.
func formatMedian(mi analysis.MedianInterval, unit string) string {
	if mi.N == 0 {
		return "-"
	}
	prec := 1
	if unit == "ms" {
		prec = 3
	}
	s := fmt.Sprintf("%.*f", prec, mi.Median)
	if mi.OK && mi.Median != 0 {
		w := math.Max(mi.Hi-mi.Median, mi.Median-mi.Lo) / math.Abs(mi.Median) * 100
		s += fmt.Sprintf(" ±%.1f%%", w)
	}
	return s
}

func formatDelta(d float64) string {
	if math.IsNaN(d) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", d)
}

// WriteComparison writes the comparison for a terminal or, with markdown,
// as Markdown that can be pasted into a pull request comment or appended to
// $GITHUB_STEP_SUMMARY: a heading, the table, the verdict line and notes.
func WriteComparison(w io.Writer, c *Comparison, markdown bool) error {
	ew := &errWriter{w: w}
	em := func(s string) string { // emphasis
		if markdown {
			return "**" + s + "**"
		}
		return s
	}
	if markdown {
		ew.printf("## benchmatrix compare: %s\n\n", c.New.Experiment)
		ew.printf("| | run | server | tool |\n|---|---|---|---|\n")
		ew.printf("| base | %s, %s | %s | %s |\n", mdCell(c.Base.Experiment), formatStarted(c.Base.Started), mdCell(c.Base.Server), mdCell(c.Base.Tool))
		ew.printf("| new | %s, %s | %s | %s |\n\n", mdCell(c.New.Experiment), formatStarted(c.New.Started), mdCell(c.New.Server), mdCell(c.New.Tool))
	} else {
		ew.printf("base: %s, %s (%s, %s)\n", c.Base.Experiment, formatStarted(c.Base.Started), c.Base.Server, c.Base.Tool)
		ew.printf("new:  %s, %s (%s, %s)\n\n", c.New.Experiment, formatStarted(c.New.Started), c.New.Server, c.New.Tool)
	}
	if len(c.EnvDiffs) > 0 {
		ew.printf("%s\n\n", heading(markdown, "What differs between these runs"))
		for _, d := range c.EnvDiffs {
			ew.printf("- %s\n", d)
		}
		ew.printf("\n")
	}
	if len(c.Mismatches) > 0 {
		prefix := ""
		if markdown {
			prefix = "> "
		}
		ew.printf("%s%s the runs are not comparable; compared anyway. Cells marked (!) are affected:\n", prefix, em("Warning:"))
		if markdown {
			ew.printf(">\n")
		}
		for _, g := range groupMismatches(c.Mismatches) {
			ew.printf("%s- %s\n", prefix, g)
		}
		ew.printf("\n")
	}
	if ew.err != nil {
		return ew.err
	}

	header, rows := ComparisonTable(c)
	if len(rows) > 0 {
		if err := writeCompareTable(w, header, rows, markdown); err != nil {
			return err
		}
		ew.printf("\n")
	}
	ew.printf("%s\n", em(c.VerdictLine()))
	if h := hostSummary(c); h != "" { // compare_host.go
		ew.printf("\n%s\n", h)
	}
	ew.printf("\nmedians over the successful repeats, ± the 95%% confidence interval of the median; " +
		"delta is new vs base: the change of the median, unpaired (the two runs' rounds are not paired); " +
		"p from the two-sided Mann-Whitney U test; n is base/new repeats.\n")
	if blocks := hostLines(c); len(blocks) > 0 && ew.err == nil { // compare_host.go
		ew.printf("\n%s\n\n", heading(markdown, "Cells: what changed, the host in each run, the ratio to the baseline within each run"))
		for _, b := range blocks {
			ew.printf("- %s\n", b[0])
			for _, l := range b[1:] {
				ew.printf("  - %s\n", l)
			}
		}
	}
	if markdown && c.newRun != nil && ew.err == nil {
		// The new run's own Conclusion (scenarios against its baseline),
		// one heading level down.
		var b strings.Builder
		WriteConclusion(&b, c.newRun)
		ew.printf("\n#%s", strings.Replace(b.String(), "## Conclusion", "## Conclusion of the new run", 1))
	}

	if len(c.Unmatched) > 0 {
		ew.printf("\n%s\n\n", heading(markdown, "Unmatched cells"))
		for _, u := range c.Unmatched {
			ew.printf("- %s: %s\n", u.Name, u.Reason)
		}
	}
	if len(c.Warnings) > 0 {
		ew.printf("\n%s\n\n", heading(markdown, "Warnings"))
		for _, s := range c.Warnings {
			ew.printf("- %s\n", s)
		}
	}
	return ew.err
}

func heading(markdown bool, s string) string {
	if markdown {
		return "### " + s
	}
	return s + ":"
}

func formatStarted(t time.Time) string {
	if t.IsZero() {
		return "start unknown"
	}
	return "started " + t.UTC().Format("2006-01-02 15:04 UTC")
}

// mdCell escapes what would break a Markdown table cell.
func mdCell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

func writeCompareTable(w io.Writer, header []string, rows [][]string, markdown bool) error {
	return section.Table(w, header, rows, compareAlignments(len(header)), markdown)
}

// compareAlignments: names and the verdict on the left, figures right.
func compareAlignments(n int) []tw.Align {
	a := section.Alignments(n)
	a[1] = tw.AlignLeft
	a[n-1] = tw.AlignLeft
	return a
}

// errWriter keeps the first write error so the formatting code stays flat.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	_, e.err = fmt.Fprintf(e.w, format, args...)
}

// NothingInCommonError says two runs share no cell (by name and
// parameters): nothing was compared, which must not pass a gate.
type NothingInCommonError struct {
	Base, New           string
	BaseCells, NewCells int
}

func (e *NothingInCommonError) Error() string {
	return fmt.Sprintf("the runs have no cell in common (base %s: %d cells, new %s: %d cells): nothing to compare; are these the right directories?",
		e.Base, e.BaseCells, e.New, e.NewCells)
}

// ExitCode implements exitcode.Coder (2: a usage problem, not a verdict).
func (e *NothingInCommonError) ExitCode() int { return exitcode.Usage }
