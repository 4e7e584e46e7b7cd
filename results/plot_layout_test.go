package results

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/record"
)

// Twelve cells without scenarios: two small multiples of six lines, no
// colour twice in one figure, legends keyed by what differs, the shared
// parameters in the title.
func TestPlotLayoutManyCells(t *testing.T) {
	t.Parallel()
	var cells []record.Cell
	for _, e := range []string{"innodb", "myisam"} {
		for _, th := range []int{1, 2, 4, 8, 16, 32} {
			cells = append(cells, record.Cell{Name: fmt.Sprintf("engine=%s/threads=%d/table_size=1000", e, th), Status: record.CellOK, Repeat: 1})
		}
	}
	r := &record.Run{Cells: cells}
	groups := plotGroups(r)
	if len(groups) != 2 || len(groups[0].cells) != 6 || groups[1].part != 2 || groups[1].parts != 2 {
		t.Fatalf("groups %+v, want 2 parts of 6", groups)
	}
	files := PlotFiles(r)
	if len(files) != 3 || !strings.HasSuffix(files[2].Path, "series-part2.png") || !strings.Contains(files[2].Title, "table_size=1000") || !strings.Contains(files[2].Title, "(2 of 2)") {
		t.Errorf("files %+v", files)
	}
	pal := newPalette(r)
	for _, g := range groups {
		colors := figureColors(r, g, pal)
		seen := map[color.RGBA]string{}
		for _, n := range g.cells {
			if other, dup := seen[colors[n]]; dup {
				t.Errorf("%s and %s share a colour", n, other)
			}
			seen[colors[n]] = n
		}
		labels, common := shortLabels(g.cells)
		if !slices.Equal(common, []string{cells[g.part*6-6].Name[:len("engine=innodb")], "table_size=1000"}) {
			t.Errorf("common %q", common)
		}
		for _, n := range g.cells {
			if strings.Contains(labels[n], "table_size") || !strings.Contains(labels[n], "threads=") {
				t.Errorf("label of %s: %q", n, labels[n])
			}
		}
	}
	// Names from a template are kept whole.
	if l, c := shortLabels([]string{"b1e1-t8", "b0e1-t8"}); l["b1e1-t8"] != "b1e1-t8" || c != nil {
		t.Errorf("template names: %q %q", l, c)
	}
}

// The figures of a 12-cell run are drawn: two small multiples (the picture
// itself was checked by eye; PLOT_OUT=DIR keeps them).
func TestWritePlotsManyCells(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := Create(dir, []string{"threads"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r := &record.Run{Experiment: "many", Columns: []string{"threads"}, Status: record.StatusFinished}
	for i := 0; i < 12; i++ {
		th := fmt.Sprint(1 << (i / 2))
		c := record.Cell{Name: fmt.Sprintf("engine=%s/threads=%s", []string{"innodb", "myisam"}[i%2], th), Index: i, Repeat: 1, Status: record.CellOK,
			Params: []experiment.Param{{Name: "threads", Value: th}}}
		res := &engine.Result{Elapsed: 10 * time.Second}
		for s := 0; s < 10; s++ {
			ev := int64(200*(i+1) + 30*(s%3))
			c.Intervals = append(c.Intervals, engine.Interval{Phase: engine.PhaseRun, Start: time.Duration(s) * time.Second,
				End: time.Duration(s+1) * time.Second, Events: ev, LatP95: float64(1 + i), LatP50: 1})
			res.Events += ev
		}
		c.Result = res
		if err := w.AppendCell(&c); err != nil {
			t.Fatal(err)
		}
		r.Cells = append(r.Cells, c)
	}
	if err := w.WriteRun(r); err != nil {
		t.Fatal(err)
	}
	files, err := WritePlots(dir, r)
	if err != nil || len(files) != 3 {
		t.Fatalf("%v, %v", files, err)
	}
	for _, f := range files[1:] {
		checkPNG(t, filepath.Join(dir, f.Path), 900, 600)
	}
	if out := os.Getenv("PLOT_OUT"); out != "" {
		for _, f := range files {
			data, _ := os.ReadFile(filepath.Join(dir, f.Path))
			_ = os.WriteFile(filepath.Join(out, filepath.Base(f.Path)), data, 0o644)
		}
	}
}

// The repeats figure: drawn when a cell has 3 or more successful repeats,
// each cell's tps relative to its median in run order, a cell whose repeats
// climb marked in the legend.
func TestRepeatsFigure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := Create(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r := &record.Run{Experiment: "warmup", Status: record.StatusFinished}
	idx := 0
	for rep := 1; rep <= 6; rep++ {
		for _, sc := range []string{"cold", "warm"} {
			tps := int64(1000)
			if sc == "cold" {
				tps = int64(800 + 40*rep) // climbs over the repeats
			} else {
				tps += int64(10 * (rep % 2))
			}
			c := record.Cell{Name: sc, Scenario: sc, Index: idx, Repeat: rep, Status: record.CellOK}
			idx++
			res := &engine.Result{Elapsed: time.Second, Events: tps}
			c.Intervals = []engine.Interval{{Phase: engine.PhaseRun, End: time.Second, Events: tps, LatP95: 1, LatP50: 1}}
			c.Result = res
			if err := w.AppendCell(&c); err != nil {
				t.Fatal(err)
			}
			r.Cells = append(r.Cells, c)
		}
	}
	if err := w.WriteRun(r); err != nil {
		t.Fatal(err)
	}
	series := repeatSeriesOf(r)
	if len(series) != 2 || len(series[0].tps) != 6 || series[0].tps[5] <= series[0].tps[0] {
		t.Fatalf("series %+v", series)
	}
	files, err := WritePlots(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	last := files[len(files)-1]
	if last.Path != PlotsDir+"/repeats.png" {
		t.Fatalf("files %+v: no repeats figure", files)
	}
	checkPNG(t, filepath.Join(dir, last.Path), 900, 400)
	if out := os.Getenv("PLOT_OUT"); out != "" {
		data, _ := os.ReadFile(filepath.Join(dir, last.Path))
		_ = os.WriteFile(filepath.Join(out, "repeats.png"), data, 0o644)
	}
	// Two repeats: no figure.
	if _, ok := repeatsFile(&record.Run{Cells: r.Cells[:4]}); ok {
		t.Error("a repeats figure for 2 repeats")
	}
}

// The slow-disk mysqlslap run's shape: a 43-tps cell next to a
// 25,000-tps one goes on a log axis, starting at the decade below the
// smallest; cells 3x apart stay linear.
func TestLogAxisWhenCellsDifferTenfold(t *testing.T) {
	if s := spread(map[string][]float64{"a": {40, 43, 0, 45}, "b": {25000, 24000, 26000}}); s <= logSpread {
		t.Errorf("spread of 43 and 25,000 tps = %.1f, want > %d", s, logSpread)
	}
	if s := spread(map[string][]float64{"a": {100, 110}, "b": {300, 330}}); s > logSpread {
		t.Errorf("spread of 105 and 315 tps = %.1f, want <= %d", s, logSpread)
	}
	if s := spread(map[string][]float64{"a": {0, 0}, "b": {300}}); s != 1 {
		t.Errorf("spread with one cell that has values = %.1f, want 1", s)
	}
	r := &record.Run{Experiment: "x"}
	for i, tps := range []float64{43, 25000} {
		r.Cells = append(r.Cells, record.Cell{Name: []string{"trx1", "trx2"}[i], Repeat: 1, Status: record.CellOK, Result: resultWithTPS(tps)})
	}
	bars, _, _, _ := headlineBars(r, newPalette(r), analysis.RunFigure(r))
	if bars.floor != 10 {
		t.Errorf("bar chart floor = %v, want 10 (the decade under 43)", bars.floor)
	}
	if _, err := barChart(r, newPalette(r)); err != nil {
		t.Fatal(err)
	}
}

// resultWithTPS is a 10 s measured window at tps transactions a second.
func resultWithTPS(tps float64) *engine.Result {
	return &engine.Result{Events: int64(tps * 10), Elapsed: 10 * time.Second}
}
