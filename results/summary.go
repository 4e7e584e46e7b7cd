package results

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"benchmatrix/analysis"
	"benchmatrix/features"
	"benchmatrix/record"
	"benchmatrix/section"
)

// summarySections are summary.md's sections, in order: results' own, and
// after each the features' that follow it (features.Reports).
func summarySections() []section.Section {
	own := []section.Section{
		{Title: "title and status", Write: writeTitle},
		{Title: "conclusion", Write: always(WriteConclusion)}, // conclusion.go
		{Title: "environment", Write: always(writeEnvironment)},
		{Title: "results", Write: writeResults},
		{Title: "pivot", Write: writePivot},         // table.go
		{Title: "mechanism", Write: writeMechanism}, // mechanism.go
		{Title: "repeats", Applies: repeated, Write: writeRepeats},
		{Title: "plots", Write: always(writePlotsSection)}, // report.go
		{Title: "explain", Write: always(writeExplain)},    // explain.go
		{Title: "failed cells", Applies: hasFailed, Write: always(writeFailed)},
		{Title: "notes", Applies: func(r *record.Run) bool { return len(r.Notes) > 0 }, Write: always(writeNotes)},
	}
	var out []section.Section
	for _, s := range own {
		out = append(out, s)
		for _, f := range features.Reports {
			for _, fs := range f.Sections {
				if fs.After == s.Title {
					out = append(out, fs)
				}
			}
		}
	}
	return out
}

// WriteMarkdown writes summary.md: what was run, where, the comparison
// table and what went wrong, one Section after the other.
func WriteMarkdown(w io.Writer, r *record.Run) error {
	for _, s := range summarySections() {
		if s.Applies != nil && !s.Applies(r) {
			continue
		}
		if err := s.Write(w, r); err != nil {
			return fmt.Errorf("summary.md, %s: %w", s.Title, err)
		}
	}
	return nil
}

// always adapts a section writer that cannot fail.
func always(f func(io.Writer, *record.Run)) func(io.Writer, *record.Run) error {
	return func(w io.Writer, r *record.Run) error {
		f(w, r)
		return nil
	}
}

func writeTitle(w io.Writer, r *record.Run) error {
	fmt.Fprintf(w, "# %s\n\n", r.Experiment)
	if r.Description != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(r.Description))
	}
	fmt.Fprintf(w, "Status: **%s**. Started %s", r.Status, r.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
	if !r.Finished.IsZero() {
		fmt.Fprintf(w, ", took %s", r.Finished.Sub(r.Started).Round(1e9))
	}
	fmt.Fprintf(w, ".\n\n")
	return nil
}

// environmentRows are the rows of summary.md's Environment table, in
// order: the server's, the features' (features.Reports), then the
// workload's and the time's.
func environmentRows() []func(w io.Writer, r *record.Run) {
	rows := []func(io.Writer, *record.Run){writeServerEnv}
	for _, f := range features.Reports {
		if f.Env != nil {
			rows = append(rows, f.Env)
		}
	}
	return append(rows,
		writeWorkloadEnv,
		func(w io.Writer, r *record.Run) { writeTimeEnv(w, r.Time) }, // timing.go
		writeDataEnv, // timing.go
	)
}

func writeEnvironment(w io.Writer, r *record.Run) {
	fmt.Fprintf(w, "## Environment\n\n")
	fmt.Fprintf(w, "| | |\n|---|---|\n")
	for _, row := range environmentRows() {
		row(w, r)
	}
}

func writeServerEnv(w io.Writer, r *record.Run) {
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
}

func writeWorkloadEnv(w io.Writer, r *record.Run) {
	if len(r.Plan) > 0 {
		s := r.Plan[0].Workload
		if s.Options != nil {
			fmt.Fprintf(w, "| workload | %s, %s measured after %s warm-up |\n", s.Options.Describe(), s.Common().Time, s.Common().Warmup)
		}
	}
}

func writeResults(w io.Writer, r *record.Run) error {
	fmt.Fprintf(w, "\n## Results\n\n")
	header, rows := ComparisonRows(r)
	if err := section.MarkdownTable(w, header, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ntps and qps are per second of the measured window (warm-up excluded); latencies are per transaction; "+
		"with repeats, each figure is the median over the successful repeats.")
	heading := ""
	if r.Baseline != "" {
		heading = header[len(header)-1] // "tps vs b1e1", "NOPM vs b1e1" (ratio.go)
	}
	switch {
	case r.Baseline != "" && analysis.RoundsOf(r) != nil:
		fmt.Fprintf(w, " %s is the Conclusion's ratio: paired by round (Hodges-Lehmann over the per-round ratios, not a ratio of the medians), "+
			"with the rounds' 95%% interval (the confidence sequence of the Conclusion).", heading)
	case r.Baseline != "":
		fmt.Fprintf(w, " %s is the Conclusion's ratio: paired by round (Hodges-Lehmann over the per-round ratios, not a ratio of the medians), "+
			"with its 95%% interval from %d rounds on.", heading, analysis.MinRoundsForRatioCI())
	}
	fmt.Fprintf(w, "\n")
	return nil
}

// repeated: some cell ran more than once.
func repeated(r *record.Run) bool {
	for _, s := range r.Summaries() {
		if s.Runs+s.Failed > 1 {
			return true
		}
	}
	return false
}

func writeRepeats(w io.Writer, r *record.Run) error {
	fmt.Fprintf(w, "\n## Repeats: how sure\n\n")
	return WriteCellStats(w, r) // stats_cells.go
}

func hasFailed(r *record.Run) bool {
	for _, c := range r.Cells {
		if c.Status != record.CellOK {
			return true
		}
	}
	return false
}

func writeFailed(w io.Writer, r *record.Run) {
	fmt.Fprintf(w, "\n## Failed cells\n\n")
	for _, c := range r.Cells {
		if c.Status == record.CellOK {
			continue
		}
		fmt.Fprintf(w, "- **%s** (repeat %d): %s\n", c.Name, c.Repeat, c.Error)
		if c.ServerLog != "" {
			fmt.Fprintf(w, "\n  ```\n%s\n  ```\n", indent(c.ServerLog, "  "))
		}
	}
}

func writeNotes(w io.Writer, r *record.Run) {
	fmt.Fprintf(w, "\n## Notes\n\n")
	for _, n := range r.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
}
