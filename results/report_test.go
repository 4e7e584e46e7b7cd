package results

import (
	"bytes"
	"image"
	_ "image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/observe"
	"benchmatrix/record"
)

// writeTestRun writes a small results directory through the Writer, as a
// run does: scenarios a and b × threads 1 and 2, a/threads=1 repeated, a
// stall in b/threads=1 and a failed repeat of b/threads=2.
func writeTestRun(t *testing.T, dir string) *record.Run {
	t.Helper()
	metrics := []string{"data_fsyncs_s"}
	w, err := Create(dir, []string{"threads"}, metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r := &record.Run{Experiment: "report-test", Baseline: "a", Columns: []string{"threads"}, MetricColumns: metrics,
		Status: record.StatusFinished, Started: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	r.Finished = r.Started.Add(time.Minute)
	type run struct {
		scenario, threads string
		repeat            int
		stall, failed     bool
	}
	runs := []run{
		{"a", "1", 1, false, false}, {"b", "1", 1, true, false}, {"a", "2", 1, false, false}, {"b", "2", 1, false, false},
		{"a", "1", 2, false, false}, {"b", "2", 2, false, true},
	}
	for i, cr := range runs {
		c := record.Cell{Name: cr.scenario + "/threads=" + cr.threads, Index: i, Scenario: cr.scenario, Repeat: cr.repeat, Status: record.CellOK,
			Params: []experiment.Param{{Name: "threads", Value: cr.threads}}}
		if cr.failed {
			c.Status, c.Error = record.CellFailed, "server went away"
			if err := w.AppendCell(&c); err != nil {
				t.Fatal(err)
			}
			r.Cells = append(r.Cells, c)
			continue
		}
		base := int64(300 + 150*len(cr.threads+cr.scenario)*i + 20*cr.repeat)
		res := &engine.Result{Elapsed: 15 * time.Second}
		for s := 0; s < 18; s++ {
			phase := engine.PhaseRun
			if s < 3 {
				phase = engine.PhaseWarmup
			}
			ev := base + int64(s%4)*15
			p95 := 2 + float64(s%3)/2
			if cr.stall && (s == 8 || s == 9) { // measured intervals 5 and 6
				ev, p95 = 0, 0
			}
			c.Intervals = append(c.Intervals, engine.Interval{Phase: phase, Start: time.Duration(s) * time.Second,
				End: time.Duration(s+1) * time.Second, Events: ev, Reads: 10 * ev, LatP95: p95, LatP50: 1})
			c.Metrics = append(c.Metrics, []float64{float64(s)})
			if phase == engine.PhaseRun {
				res.Events += ev
			}
		}
		res.Latency.P95 = 2.5
		c.Result = res
		if cr.stall {
			c.Stalls = &observe.StallReport{Median: float64(base), Count: 1, TotalSeconds: 2, LongestSeconds: 2,
				Episodes: []observe.Episode{{Start: 5, End: 7, Zero: true}}, Text: "1 stall to zero, longest 2 s"}
		}
		if err := w.AppendCell(&c); err != nil {
			t.Fatal(err)
		}
		r.Cells = append(r.Cells, c)
	}
	if err := w.WriteRun(r); err != nil {
		t.Fatal(err)
	}
	return r
}

var mdImage = regexp.MustCompile(`!\[([^\]]*)\]\(([^)]+)\)`)

// checkPNG fails unless path is a PNG of at least minW x minH pixels.
func checkPNG(t *testing.T, path string, minW, minH int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if format != "png" || cfg.Width < minW || cfg.Height < minH {
		t.Errorf("%s: %s %dx%d, want a png of at least %dx%d", path, format, cfg.Width, cfg.Height, minW, minH)
	}
}

func TestRegenerate(t *testing.T) {
	dir := t.TempDir()
	writeTestRun(t, dir)
	if err := Regenerate(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "\n## Plots\n") {
		t.Fatalf("summary.md has no Plots section:\n%s", md)
	}
	links := mdImage.FindAllStringSubmatch(string(md), -1)
	want := []string{"plots/tps.png", "plots/series-threads=1.png", "plots/series-threads=2.png"}
	if len(links) != len(want) {
		t.Fatalf("summary.md links %q, want %q", links, want)
	}
	for i, l := range links {
		if l[2] != want[i] {
			t.Errorf("link %d = %s, want %s", i, l[2], want[i])
		}
		if l[1] == "" {
			t.Errorf("link %s has no alt text", l[2])
		}
		checkPNG(t, filepath.Join(dir, filepath.FromSlash(l[2])), 500, 200)
	}
	if !strings.Contains(string(md), "every repeat is drawn") {
		t.Errorf("summary.md does not say how repeats are drawn")
	}
	if b, err := os.ReadFile(filepath.Join(dir, BenchFile)); err != nil || !bytes.Contains(b, []byte("Benchmark")) {
		t.Errorf("results.txt: %v\n%s", err, b)
	}

	// Idempotent: a second run gives the same bytes and no new files.
	before := snapshot(t, dir)
	if err := Regenerate(dir); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, dir)
	if len(after) != len(before) {
		t.Errorf("files before %d, after %d", len(before), len(after))
	}
	for name, b := range before {
		if !bytes.Equal(b, after[name]) {
			t.Errorf("%s changed on a second Regenerate", name)
		}
	}
}

func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		out[path] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRegenerateNoRun(t *testing.T) {
	if err := Regenerate(t.TempDir()); err == nil {
		t.Fatal("Regenerate of an empty directory: no error")
	}
}

// A plot that cannot be drawn must not cost the summary.
func TestWriteSummaryKeepsSummaryWhenPlotsFail(t *testing.T) {
	dir := t.TempDir()
	r := writeTestRun(t, dir)
	if err := os.Remove(filepath.Join(dir, IntervalsFile)); err != nil {
		t.Fatal(err)
	}
	w := &Writer{Dir: dir}
	if err := w.WriteSummary(r); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Results", "Some plots could not be drawn", IntervalsFile, "## Notes"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	if len(r.Notes) != 0 {
		t.Errorf("WriteSummary changed the run's notes: %q", r.Notes)
	}
}
