package results

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"benchmatrix/features"
	"benchmatrix/record"
	"benchmatrix/section"
)

// plotsNote starts the note that summary.md carries when plots could not be
// drawn.
const plotsNote = "plots: "

// Regenerate re-renders a stored results directory's reports from run.json
// and intervals.csv: summary.md, results.txt, report.html and the plots, each file
// replaced atomically. `benchmatrix report DIR` runs it.
func Regenerate(dir string) error {
	r, err := ReadRun(dir)
	if err != nil {
		return err
	}
	return writeReports(dir, r)
}

// writeReports draws the plots, then writes summary.md, results.txt and
// report.html. A plot that cannot be drawn does not cost the summary:
// summary.md says why instead.
func writeReports(dir string, r *record.Run) error {
	md := r
	if _, err := WritePlots(dir, r); err != nil {
		cp := *r
		cp.Notes = append(slices.Clip(r.Notes), plotsNote+oneLine(err.Error()))
		md = &cp
	}
	md = derive(dir, md)
	var b bytes.Buffer
	if err := WriteMarkdown(&b, md); err != nil {
		return err
	}
	if err := section.WriteFileAtomic(filepath.Join(dir, SummaryFile), b.Bytes()); err != nil {
		return err
	}
	b.Reset()
	if err := WriteBenchFormat(&b, r); err != nil {
		return err
	}
	if err := section.WriteFileAtomic(filepath.Join(dir, BenchFile), b.Bytes()); err != nil {
		return err
	}
	return WriteHTML(dir, md) // html.go: report.html
}

// writePlotsSection is summary.md's "Plots" section: links to the figures
// of PlotFiles(r), relative to the results directory.
func writePlotsSection(w io.Writer, r *record.Run) {
	files := PlotFiles(r)
	if len(files) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Plots\n\n")
	for _, n := range r.Notes {
		if strings.HasPrefix(n, plotsNote) {
			fmt.Fprintf(w, "Some plots could not be drawn (%s); the links below may be missing or stale.\n\n", strings.TrimPrefix(n, plotsNote))
			break
		}
	}
	repeated := false
	for _, s := range r.Summaries() {
		repeated = repeated || s.Runs > 1
	}
	fmt.Fprintf(w, "Over time: tps (top) and p95 latency per second since each cell started, and below them, when sampled, fsyncs per second and the device's await; ")
	if repeated {
		fmt.Fprintf(w, "every repeat is drawn, the first thick and later ones thin in the same colour; ")
	}
	fmt.Fprintf(w, "the warm-up is dashed on grey, stalls found in the measured window are shaded in the line's colour.\n\n")
	for i, f := range files {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "![%s](%s)\n", f.Title, f.Path)
	}
}

// derive is the run with what the features compute from the files under
// dir before the reports are written (features.Reports: the profiles'
// predictions).
func derive(dir string, r *record.Run) *record.Run {
	for _, f := range features.Reports {
		if f.Derive != nil {
			r = f.Derive(dir, r)
		}
	}
	return r
}
