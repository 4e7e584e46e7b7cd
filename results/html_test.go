package results

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"benchmatrix/engine"
	"benchmatrix/experiment"
	"path/filepath"
	"testing"

	"benchmatrix/record"
	"benchmatrix/results/htmlreport/browser"
)

// copyDir copies a recorded results directory (files only, one level and
// its subfolders) into a temporary one.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// The recorded flush run (sandbox, 3 scenarios x 2 repeats, 4 s measured
// after 2 s of warm-up, 2026-12-03) as a page in a real browser.
func TestHTMLReportInBrowser(t *testing.T) {
	browser.Need(t)
	dir := copyDir(t, filepath.Join("testdata", "htmlrun"))
	if err := RegenerateHTML(dir); err != nil {
		t.Fatal(err)
	}
	r, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	var cells []string
	for _, s := range r.Summaries() {
		cells = append(cells, s.Name)
	}
	rep := browser.Check(t, filepath.Join(dir, ReportFile), "flush-recorded", cells, "Nothing can be concluded", "What undermines it", "Environment", "Over time")
	if len(rep.Cells) != len(cells) {
		t.Errorf("legend has %v, want the %d cells %v", rep.Cells, len(cells), cells)
	}
	// b0e0's off-CPU flame graph (profiles/b0e0-r1/offcpu.svg, from a
	// flush-profile run) is embedded and searchable.
	if rep.FlameHits == "" {
		t.Errorf("no embedded flame graph was searched")
	}
}

// A 24-cell run (4 scenarios x 6 thread counts, 2 repeats, 60 s measured
// after 10 s of warm-up, every sampled metric column of a real run) makes a
// page under htmlBudget, with every cell in its legend, and a cell 500x
// slower than the others puts tps on a log axis.
func TestHTMLReport24Cells(t *testing.T) {
	dir := t.TempDir()
	hdr, err := os.ReadFile(filepath.Join("testdata", "htmlrun", IntervalsFile))
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(string(hdr), "\n", 2)[0]
	metrics := strings.Split(first, ",")[len(baseIntervalColumns):] // the stored file has no engine columns
	w, err := Create(dir, []string{"threads"}, metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r := &record.Run{Experiment: "many", Columns: []string{"threads"}, MetricColumns: metrics, Status: record.StatusFinished, Baseline: "s1"}
	var names []string
	rng := rand.New(rand.NewPCG(1, 2))
	for rep := 1; rep <= 2; rep++ {
		for si, sc := range []string{"s1", "s2", "s3", "s4"} {
			for _, th := range []int{1, 2, 4, 8, 16, 32} {
				name := fmt.Sprintf("%s/threads=%d", sc, th)
				if rep == 1 {
					names = append(names, name)
				}
				base := 1000.0 * float64(th) * float64(si+1)
				if sc == "s4" && th == 1 {
					base = 43 // the slow-disk cell
				}
				c := record.Cell{Name: name, Scenario: sc, Repeat: rep, Status: record.CellOK,
					Params: []experiment.Param{{Name: "threads", Value: strconv.Itoa(th)}}}
				var events int64
				for s := 1; s <= 70; s++ {
					phase := engine.PhaseRun
					if s <= 10 {
						phase = engine.PhaseWarmup
					}
					n := int64(base * (0.8 + 0.4*rng.Float64()))
					if phase == engine.PhaseRun {
						events += n
					}
					c.Intervals = append(c.Intervals, engine.Interval{Phase: phase, Start: time.Duration(s-1) * time.Second, End: time.Duration(s) * time.Second,
						Events: n, Writes: n, LatP95: 1000 / base * float64(th) * (1 + rng.Float64())})
					row := make([]float64, len(metrics))
					for i := range row {
						row[i] = math.Round(rng.Float64()*base*10) / 10
					}
					c.Metrics = append(c.Metrics, row)
				}
				c.Result = &engine.Result{Events: events, Elapsed: 60 * time.Second}
				if err := w.AppendCell(&c); err != nil {
					t.Fatal(err)
				}
				c.Intervals, c.Metrics = nil, nil
				r.Cells = append(r.Cells, c)
			}
		}
	}
	if err := WriteHTML(dir, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("24 cells x 2 repeats x 70 s x %d metric columns: report.html is %d KiB", len(metrics), len(b)/1024)
	if len(b) > htmlBudget {
		t.Errorf("report.html is %d KiB, over the %d KiB budget", len(b)/1024, htmlBudget/1024)
	}
	page := string(b)
	if d := os.Getenv("BM_HTML_SHOTS"); d != "" {
		os.WriteFile(filepath.Join(d, "many.html"), b, 0o644)
	}
	for _, n := range names {
		if !strings.Contains(page, `data-toggle="`+n+`"`) {
			t.Errorf("cell %s has no switch in the legend", n)
		}
	}
	if !strings.Contains(page, "tps (log scale)") {
		t.Errorf("a 43-tps cell beside 32,000-tps ones: the tps chart is not on a log axis")
	}
}

// htmlBudget is the most a 24-cell run's page may weigh (docs/report.md).
const htmlBudget = 4 << 20

// A run whose only cell failed, without intervals.csv: the page is still
// written, with the failure and no charts.
func TestHTMLReportOfFailedRun(t *testing.T) {
	dir := t.TempDir()
	r := &record.Run{Experiment: "broken", Status: record.StatusFailed,
		Cells: []record.Cell{{Name: "a", Repeat: 1, Status: record.CellFailed, Error: "prepare: Error 1045: Access denied"}}}
	if err := WriteHTML(dir, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"Failed cells", "Access denied", "Conclusion"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, `<svg class="chart"`) {
		t.Errorf("a chart without any interval")
	}
}
