package results

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// ComparisonRows returns the comparison table's header and rows: one row
// per cell (medians over repeats) with tps, qps, latency and the tps ratio
// to the cell's baseline: the Conclusion's paired ratio with its 95 %
// interval when there is one (ratio.go).
func ComparisonRows(r *Run) ([]string, [][]string) {
	header := []string{"cell", "runs", "tps", "qps", "avg ms", "p95 ms", "p99 ms", "errors"}
	if r.Baseline != "" {
		header = append(header, "tps vs "+r.Baseline)
	}
	sums := r.Summaries()
	ratios := baselineRatios(r)
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
			} else if BaselineFor(r.Baseline, s, sums) == s.Name && s.Runs > 0 {
				ratio = "1.00x" // the baseline itself
			}
			row = append(row, ratio)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// WriteTable prints the comparison table for a terminal.
func WriteTable(w io.Writer, r *Run) error {
	header, rows := ComparisonRows(r)
	return renderTable(w, header, rows, alignments(len(header)), false)
}

func writeMarkdownTable(w io.Writer, header []string, rows [][]string) error {
	return renderTable(w, header, rows, alignments(len(header)), true)
}

// renderTable draws a table with the given column alignments, in box
// characters or as Markdown.
func renderTable(w io.Writer, header []string, rows [][]string, aligns []tw.Align, markdown bool) error {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: aligns}),
	}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(anyRow(header)...)
	for _, row := range rows {
		if err := t.Append(anyRow(row)...); err != nil {
			return err
		}
	}
	return t.Render()
}

func alignments(n int) []tw.Align {
	a := make([]tw.Align, n)
	for i := range a {
		a[i] = tw.AlignRight
	}
	a[0] = tw.AlignLeft
	return a
}

func anyRow(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// WriteMarkdown writes summary.md: what was run, where, the comparison
// table and what went wrong.
func WriteMarkdown(w io.Writer, r *Run) error {
	fmt.Fprintf(w, "# %s\n\n", r.Experiment)
	if r.Description != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(r.Description))
	}
	fmt.Fprintf(w, "Status: **%s**. Started %s", r.Status, r.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
	if !r.Finished.IsZero() {
		fmt.Fprintf(w, ", took %s", r.Finished.Sub(r.Started).Round(1e9))
	}
	fmt.Fprintf(w, ".\n\n")
	WriteConclusion(w, r)
	fmt.Fprintf(w, "## Environment\n\n")
	fmt.Fprintf(w, "| | |\n|---|---|\n")
	fmt.Fprintf(w, "| server | %s %s (%s provider) |\n", r.Server.Flavor, r.Server.Version, r.Server.Provider)
	fmt.Fprintf(w, "| host | %s, %d cores, %d MiB memory |\n", r.Host.CPUModel, r.Host.Cores, r.Host.MemoryMB)
	fmt.Fprintf(w, "| kernel | %s |\n", r.Host.Kernel)
	if r.Host.Storage != "" {
		fmt.Fprintf(w, "| datadir storage | %s (%s) |\n", r.Host.Storage, r.Host.Filesystem)
	}
	fmt.Fprintf(w, "| tool | %s %s (%s, %s/%s) |\n", r.Tool.Name, r.Tool.Version, r.Tool.GoVersion, runtime.GOOS, runtime.GOARCH)
	if len(r.ServerConfig) > 0 {
		var cfg []string
		for _, p := range r.ServerConfig {
			cfg = append(cfg, p.Name+"="+p.Value)
		}
		fmt.Fprintf(w, "| server config | %s |\n", strings.Join(cfg, ", "))
	}
	writeLimitsEnv(w, r) // limits.go
	if len(r.Plan) > 0 {
		o := r.Plan[0].Workload
		fmt.Fprintf(w, "| workload | %s, %d table(s) x %d rows, rand %s, %s measured after %s warm-up |\n",
			o.Workload, o.Tables, o.TableSize, o.RandType, o.Time, o.Warmup)
	}
	writeTimeEnv(w, r.Time) // timing.go
	writeDataEnv(w, r)      // timing.go
	fmt.Fprintf(w, "\n## Results\n\n")
	header, rows := ComparisonRows(r)
	if err := writeMarkdownTable(w, header, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ntps and qps are per second of the measured window (warm-up excluded); latencies are per transaction; "+
		"with repeats, each figure is the median over the successful repeats.")
	if r.Baseline != "" {
		fmt.Fprintf(w, " tps vs %s is the Conclusion's ratio: paired by round (Hodges-Lehmann over the per-round ratios, not a ratio of the medians), "+
			"with its 95%% interval from %d rounds on.", r.Baseline, MinRoundsForRatioCI())
	}
	fmt.Fprintf(w, "\n")
	if err := writePivot(w, r); err != nil {
		return err
	}
	if err := writeMechanism(w, r); err != nil {
		return err
	}
	repeated := false
	for _, s := range r.Summaries() {
		repeated = repeated || s.Runs+s.Failed > 1
	}
	if repeated {
		fmt.Fprintf(w, "\n## Repeats: how sure\n\n")
		if err := WriteCellStats(w, r); err != nil {
			return err
		}
	}
	writePlotsSection(w, r)
	writeProfiles(w, r) // profile.go
	writeExplain(w, r)
	var failed []Cell
	for _, c := range r.Cells {
		if c.Status != CellOK {
			failed = append(failed, c)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\n## Failed cells\n\n")
		for _, c := range failed {
			fmt.Fprintf(w, "- **%s** (repeat %d): %s\n", c.Name, c.Repeat, c.Error)
			if c.ServerLog != "" {
				fmt.Fprintf(w, "\n  ```\n%s\n  ```\n", indent(c.ServerLog, "  "))
			}
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintf(w, "\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
	}
	return nil
}

// pivotColumn is the parameter whose values become the pivot's columns:
// the run's choice ([experiment] pivot), else the scenario, else the last
// varying parameter.
func pivotColumn(r *Run) string {
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

func summaryValue(s Summary, name string) string {
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
func writePivot(w io.Writer, r *Run) error {
	colName := pivotColumn(r)
	if colName == "" {
		return nil
	}
	sums := r.Summaries()
	var cols, rowKeys []string
	seenC, seenR := map[string]bool{}, map[string]bool{}
	cell := map[string]Summary{}
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
				row = append(row, fmt.Sprintf("%.1f (%s)", s.TPS, RatioText(l.Ratio)))
			default:
				row = append(row, fmt.Sprintf("%.1f", s.TPS))
			}
		}
		rows = append(rows, row)
	}
	return writeMarkdownTable(w, header, rows)
}

// isScenarioParam reports whether a parameter comes from the cell's
// scenario rather than an axis (it is then named by the scenario, not
// repeated in the pivot's row).
func isScenarioParam(r *Run, scenario, name string) bool {
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

// writeExplain says, per cell run, what the observers saw: stalls and the
// metrics that moved at their onsets, table growth, the top waits.
func writeExplain(w io.Writer, r *Run) {
	any := false
	for _, c := range r.Cells {
		any = any || c.Stalls != nil || c.Growth != nil || len(c.Waits) > 0
	}
	if !any {
		return
	}
	fmt.Fprintf(w, "\n## What happened in each cell\n\n")
	for _, c := range r.Cells {
		if c.Stalls == nil && c.Growth == nil && len(c.Waits) == 0 {
			continue
		}
		fmt.Fprintf(w, "**%s** (repeat %d)\n\n", c.Name, c.Repeat)
		if st := c.Stalls; st != nil {
			fmt.Fprintf(w, "- stalls: %s", st.Text)
			if ev := c.StallEvidence; len(ev) > 0 {
				if len(ev) > 5 {
					ev = ev[:5]
				}
				fmt.Fprintf(w, "; at the onsets: %s", strings.Join(ev, ", "))
			}
			if c.Detector != nil {
				fmt.Fprintf(w, "; %s", c.Detector.Text)
			} else if len(c.Injected) > 0 {
				fmt.Fprintf(w, " (%d injected)", len(c.Injected))
			}
			fmt.Fprintln(w)
		}
		writeTopology(w, c) // topology.go
		if ct := c.Contention; ct != nil && ct.Contended {
			fmt.Fprintf(w, "- **contention**: %s\n", ct.Why)
		}
		if g := c.Growth; g != nil {
			how := "estimated"
			if g.RowsExact {
				how = "counted"
			}
			fmt.Fprintf(w, "- table growth: %d -> %d rows (%+d, %s), %s -> %s, max(id) %d -> %d\n",
				g.RowsBefore, g.RowsAfter, g.RowsDelta, how, mib(g.BytesBefore), mib(g.BytesAfter), g.MaxIDBefore, g.MaxIDAfter)
		}
		if len(c.Waits) > 0 {
			var ws []string
			for i, e := range c.Waits {
				if i == 5 {
					break
				}
				ws = append(ws, waitText(e))
			}
			fmt.Fprintf(w, "- top waits (performance_schema; total, count, average, longest): %s\n", strings.Join(ws, "; "))
		}
		fmt.Fprintln(w)
	}
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func indent(s, pre string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = pre + lines[i]
	}
	return strings.Join(lines, "\n")
}
