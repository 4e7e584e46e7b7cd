package tpcc

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"benchmatrix/engine"
	"benchmatrix/record"
	"benchmatrix/section"
)

// Report is what the TPC-C engine adds to a run's reports: summary.md's
// TPC-C section, for a run with tpcc cells: per cell NOPM and TPM, what
// rolled back, restarted and failed (by error code) and the consistency
// check; then per transaction type its committed count, throughput and
// latency. The figures are the engine's own (engine.Result.Metrics,
// descriptor.go); medians over a cell's successful repeats, counts of
// rollbacks, retries and errors summed over them. report.html shows it
// with summary.md's other sections.
var Report = section.Feature{
	Name: Name,
	Sections: []section.Section{
		{Title: "tpc-c", After: "mechanism", Applies: hasTPCC, Write: writeTPCC},
	},
}

// ranTPCC reports whether the cell ran this engine.
func ranTPCC(c *record.Cell) bool {
	_, ok := engine.Registry{Descriptor}.Of(c.Workload)
	return ok
}

func hasTPCC(r *record.Run) bool {
	for i := range r.Cells {
		if ranTPCC(&r.Cells[i]) {
			return true
		}
	}
	return false
}

// tpccCell is one cell's TPC-C figures over its repeats.
type tpccCell struct {
	name            string
	ok, runs        int
	metrics         map[string][]float64 // per successful repeat
	errors          map[string]int64     // summed
	checked, failed int                  // consistency: runs checked, runs failed by a violation
}

func tpccCells(r *record.Run) []*tpccCell {
	var out []*tpccCell
	by := map[string]*tpccCell{}
	for i := range r.Cells {
		c := &r.Cells[i]
		if !ranTPCC(c) {
			continue
		}
		t := by[c.Name]
		if t == nil {
			t = &tpccCell{name: c.Name, metrics: map[string][]float64{}, errors: map[string]int64{}}
			by[c.Name] = t
			out = append(out, t)
		}
		t.runs++
		if strings.Contains(c.Error, "consistency check failed") {
			t.checked++
			t.failed++
		}
		if c.Status != record.CellOK || c.Result == nil {
			continue
		}
		t.ok++
		for k, v := range c.Result.Metrics {
			t.metrics[k] = append(t.metrics[k], v)
		}
		if _, ok := c.Result.Metrics["consistency_failures"]; ok {
			t.checked++
			if c.Result.Metrics["consistency_failures"] > 0 {
				t.failed++
			}
		}
		for code, n := range c.Result.ErrorsByCode {
			t.errors[code] += n
		}
	}
	return out
}

// median of a metric over the successful repeats; ok false without one.
func (t *tpccCell) median(name string) (float64, bool) {
	vs := t.metrics[name]
	if len(vs) == 0 {
		return 0, false
	}
	return record.Median(vs), true
}

func (t *tpccCell) sum(name string) (float64, bool) {
	vs := t.metrics[name]
	if len(vs) == 0 {
		return 0, false
	}
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s, true
}

func figure(v float64, ok bool, format string) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func (t *tpccCell) errorsText() string {
	if len(t.errors) == 0 {
		return "none"
	}
	codes := make([]string, 0, len(t.errors))
	for code := range t.errors {
		codes = append(codes, code)
	}
	// Server error numbers in order, then the names.
	sort.Slice(codes, func(i, j int) bool {
		a, aerr := strconv.Atoi(codes[i])
		b, berr := strconv.Atoi(codes[j])
		switch {
		case aerr == nil && berr == nil:
			return a < b
		case (aerr == nil) != (berr == nil):
			return aerr == nil
		}
		return codes[i] < codes[j]
	})
	parts := make([]string, len(codes))
	for i, code := range codes {
		parts[i] = fmt.Sprintf("%s: %d", code, t.errors[code])
	}
	return strings.Join(parts, ", ")
}

func (t *tpccCell) consistency() string {
	switch {
	case t.checked == 0:
		return "not checked"
	case t.failed == 0:
		return fmt.Sprintf("passed (%d of %d)", t.checked, t.checked)
	}
	return fmt.Sprintf("**failed in %d of %d**", t.failed, t.checked)
}

func writeTPCC(w io.Writer, r *record.Run) error {
	cells := tpccCells(r)
	fmt.Fprintf(w, "\n## TPC-C\n\n")
	fmt.Fprintf(w, "NOPM and TPM are HammerDB's names: committed New-Orders and committed transactions of every type per minute of the measured window, "+
		"not audited tpmC (docs/tpcc.md). Figures are medians over each cell's successful runs; rolled back (New-Order's 1%% unused item, by design), "+
		"retries (deadlocks and lock wait timeouts run again) and errors by code are summed over them.\n\n")
	header := []string{"cell", "runs", "NOPM", "TPM", "rolled back", "retries", "errors by code", "consistency"}
	var rows [][]string
	for _, t := range cells {
		runs := strconv.Itoa(t.ok)
		if t.ok < t.runs {
			runs = fmt.Sprintf("%d (%d failed)", t.ok, t.runs-t.ok)
		}
		nopm, nok := t.median("nopm")
		tpm, tok := t.median("tpm")
		rb, rok := t.sum("rolled_back")
		if !rok && t.ok > 0 {
			rb, rok = 0, true // recorded only when some rolled back
		}
		rs, sok := t.sum("restarts")
		rows = append(rows, []string{t.name, runs, figure(nopm, nok, "%.0f"), figure(tpm, tok, "%.0f"),
			figure(rb, rok, "%.0f"), figure(rs, sok, "%.0f"), t.errorsText(), t.consistency()})
	}
	if err := section.MarkdownTable(w, header, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nPer transaction type (medians over the successful runs; committed per run, per minute of the window, latency of the committed ones):\n\n")
	header = []string{"cell", "type", "committed", "per min", "avg ms", "p95 ms", "p99 ms"}
	rows = rows[:0]
	for _, t := range cells {
		if t.ok == 0 {
			continue
		}
		for _, ty := range Types()[:5] {
			n := ty.String()
			c, cok := t.median(n + "_committed")
			pm, pok := t.median(n + "_per_min")
			avg, aok := t.median(n + "_avg_ms")
			p95, p95ok := t.median(n + "_p95_ms")
			p99, p99ok := t.median(n + "_p99_ms")
			rows = append(rows, []string{t.name, n, figure(c, cok, "%.0f"), figure(pm, pok, "%.1f"),
				figure(avg, aok, "%.2f"), figure(p95, p95ok, "%.2f"), figure(p99, p99ok, "%.2f")})
		}
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "No tpcc cell run succeeded.\n")
		return nil
	}
	return section.MarkdownTable(w, header, rows)
}
