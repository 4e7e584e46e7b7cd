package results

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/tpcc"
)

// tpccRun is a tpcc-durability-like conclusive run: per round, each cell's
// tps and NOPM. headline says whether its results recorded tpcc's
// headline (false: a run.json written before results recorded one).
func tpccRun(tps, nopm map[string][]float64, headline bool) *record.Run {
	r := &record.Run{Experiment: "tpcc-durability", Baseline: "b1e1", Order: "grouped",
		Manifest: "[experiment]\nname = \"tpcc-durability\"\nbaseline = \"b1e1\"\nuntil = \"conclusive\"\n[workload]\nname = \"tpcc\"\n" +
			"[scenarios]\nb1e1 = { sync_binlog = 1 }\nb0e0 = { sync_binlog = 0, innodb_flush_log_at_trx_commit = 0 }\n"}
	h := tpcc.Descriptor.HeadlineFigure()
	for rep := 1; rep <= len(tps["b1e1"]); rep++ {
		for _, sc := range []string{"b1e1", "b0e0"} {
			res := &engine.Result{Elapsed: 10 * time.Second, Events: int64(tps[sc][rep-1] * 10),
				Metrics: map[string]float64{"nopm": nopm[sc][rep-1], "tpm": 2.3 * nopm[sc][rep-1]}}
			if headline {
				res.Headline = &h
			}
			r.Cells = append(r.Cells, record.Cell{Name: sc, Scenario: sc, Repeat: rep, Index: len(r.Cells), Status: record.CellOK, Result: res})
			r.Plan = append(r.Plan, record.PlanCell{Name: sc, Scenario: sc, Repeat: rep})
		}
	}
	return r
}

// tps says nothing (the two cells alternate), NOPM says b0e0 makes twice
// b1e1's new orders in every round: the Conclusion, the rounds' decision
// and the Results table are on NOPM, the engine's headline.
var (
	flatTPS = map[string][]float64{
		"b1e1": {100, 104, 98, 101, 99, 103, 97, 102},
		"b0e0": {101, 103, 99, 100, 100, 102, 98, 101},
	}
	doubleNOPM = map[string][]float64{
		"b1e1": {2000, 2100, 1950, 2050, 1980, 2080, 1990, 2020},
		"b0e0": {4100, 4150, 3900, 4080, 4010, 4200, 3950, 4060},
	}
)

func TestTPCCConcludesOnNOPM(t *testing.T) {
	t.Parallel()
	if h := tpcc.Descriptor.HeadlineFigure(); h.Name != "nopm" || h.Label != "NOPM" || !h.HigherIsBetter {
		t.Fatalf("tpcc's headline: %+v", h)
	}
	for _, d := range experiment.Engines {
		if d.Name != tpcc.Name && d.HeadlineFigure() != engine.TPS {
			t.Errorf("engine %s's headline is %+v, not tps", d.Name, d.HeadlineFigure())
		}
	}
	r := tpccRun(flatTPS, doubleNOPM, true)
	fig, note := analysis.ComparisonFigure(r, "b0e0", "b1e1")
	if fig.Name != "nopm" || note != "" {
		t.Fatalf("ComparisonFigure: %+v, %q", fig, note)
	}
	c := Conclude(r)
	if len(c.Ratios) != 1 || c.Ratios[0].Figure.Name != "nopm" || c.Ratios[0].Ratio.Ratio < 1.9 || c.Ratios[0].Ratio.Ratio > 2.1 {
		t.Fatalf("ratios: %+v", c.Ratios)
	}
	// The rounds decide on the same figure, so a conclusive run stops on
	// what the Conclusion states.
	spec := record.RoundsSpec{MinRounds: 3, MaxRounds: 12, Precision: 0.05}
	ds, err := analysis.DecideRounds(r, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Figure != "nopm" || ds[0].Outcome != analysis.OutcomeFaster || ds[0].Ratio != c.Ratios[0].Ratio.Ratio {
		t.Fatalf("decisions: %+v (the Conclusion's ratio %.4f)", ds, c.Ratios[0].Ratio.Ratio)
	}
	rec, err := analysis.NewRoundsRecord(r, spec, analysis.StoppedDecided, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r.Rounds = rec
	var b bytes.Buffer
	WriteConclusion(&b, r)
	if err := writeResults(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**Conclusive after 8 rounds, 1m0s**",
		"- b0e0 vs b1e1: **2.00x** NOPM, higher, significant (95% CI",
		"   NOPM vs b1e1    |",
		"NOPM vs b1e1 is the Conclusion's ratio",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	// On tps the same rounds decide nothing: the figure matters.
	old := tpccRun(flatTPS, doubleNOPM, false)
	ds, _ = analysis.DecideRounds(old, spec)
	if len(ds) != 1 || ds[0].Figure != "tps" || ds[0].Outcome == analysis.OutcomeFaster {
		t.Errorf("on tps: %+v", ds)
	}
}

// A run.json written before results recorded headlines (its tpcc cells
// carry NOPM in their metrics, no headline) concludes on tps, as it did.
func TestRunWithoutHeadlinesConcludesOnTPS(t *testing.T) {
	t.Parallel()
	r := tpccRun(doubleNOPM, flatTPS, false) // tps doubles, NOPM is flat
	c := Conclude(r)
	if len(c.Ratios) != 1 || c.Ratios[0].Figure.Name != "tps" || c.Ratios[0].Ratio.Ratio < 1.9 {
		t.Fatalf("ratios: %+v", c.Ratios)
	}
	var b bytes.Buffer
	WriteConclusion(&b, r)
	if !strings.Contains(b.String(), "- b0e0: **2.00x** b1e1 tps (95% CI") {
		t.Errorf("conclusion:\n%s", b.String())
	}
}

// Cells whose engines' headlines differ are compared on tps, and the
// Conclusion says so.
func TestMixedHeadlinesCompareOnTPS(t *testing.T) {
	t.Parallel()
	r := tpccRun(doubleNOPM, flatTPS, true)
	for i := range r.Cells {
		if r.Cells[i].Name == "b1e1" {
			r.Cells[i].Result.Headline = nil // an engine without a headline of its own: tps
		}
	}
	fig, note := analysis.ComparisonFigure(r, "b0e0", "b1e1")
	if fig.Name != "tps" || !strings.Contains(note, "b0e0 vs b1e1 is compared on tps") || !strings.Contains(note, "b0e0's is NOPM, b1e1's is tps") {
		t.Fatalf("ComparisonFigure: %+v, %q", fig, note)
	}
	c := Conclude(r)
	found := false
	for _, w := range c.Warnings {
		found = found || w == note
	}
	if len(c.Ratios) != 1 || c.Ratios[0].Figure.Name != "tps" || !found {
		t.Errorf("ratios %+v, warnings %q", c.Ratios, c.Warnings)
	}
}

// intervals.csv has tpcc's per-interval columns (the engine declares
// them): a tpcc cell's rows carry each second's NOPM, TPM and each type's
// rate and p95, an oltp cell's rows leave them empty.
func TestTPCCIntervalColumns(t *testing.T) {
	t.Parallel()
	want := []string{"nopm", "tpm", "new_order_per_min", "new_order_p95_ms", "payment_per_min", "payment_p95_ms",
		"order_status_per_min", "order_status_p95_ms", "delivery_per_min", "delivery_p95_ms", "stock_level_per_min", "stock_level_p95_ms"}
	got := IntervalColumns[len(baseIntervalColumns):]
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("engine columns %q, want %q", got, want)
	}
	iv := tpcc.Interval{NewOrders: 10, Committed: 23}
	iv.Phase, iv.Start, iv.End, iv.Events = engine.PhaseRun, time.Second, 2*time.Second, 24
	iv.Types[0] = tpcc.IntervalType{Committed: 10, P95: 12.5} // New-Order
	iv.Types[1] = tpcc.IntervalType{Committed: 9, P95: 4.25}  // Payment
	tc := &record.Cell{Name: "b1e1", Repeat: 1, Status: record.CellOK, Intervals: []engine.Interval{iv.Engine()}}
	oc := &record.Cell{Name: "oltp", Repeat: 1, Status: record.CellOK, Intervals: []engine.Interval{{Phase: engine.PhaseRun, Start: time.Second, End: 2 * time.Second, Events: 5}}}
	col := func(row []string, name string) string {
		for i, h := range IntervalColumns {
			if h == name {
				return row[i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	row := IntervalRows(tc, 0)[0]
	for name, v := range map[string]string{"tps": "24.00", "nopm": "600", "tpm": "1380", "new_order_per_min": "600",
		"new_order_p95_ms": "12.5", "payment_per_min": "540", "payment_p95_ms": "4.25", "delivery_per_min": "0"} {
		if got := col(row, name); got != v {
			t.Errorf("tpcc row's %s = %q, want %q", name, got, v)
		}
	}
	row = IntervalRows(oc, 0)[0]
	if len(row) != len(IntervalColumns) {
		t.Fatalf("row of %d fields, header of %d", len(row), len(IntervalColumns))
	}
	for _, name := range want {
		if got := col(row, name); got != "" {
			t.Errorf("oltp row's %s = %q, want empty", name, got)
		}
	}
}

// The bar chart of tpcc cells draws what the Conclusion compares: NOPM
// bars (the medians of the cells' NOPM), in plots/nopm.png, their ratio
// beside them without a second figure's name; a run.json without
// headlines, and a run of mixed engines, keep plots/tps.png on tps.
func TestTPCCBarChartOnNOPM(t *testing.T) {
	t.Parallel()
	r := tpccRun(flatTPS, doubleNOPM, true)
	if fig := analysis.RunFigure(r); fig.Name != "nopm" {
		t.Fatalf("RunFigure: %+v", fig)
	}
	files := PlotFiles(r)
	if len(files) == 0 || files[0].Path != PlotsDir+"/nopm.png" || files[0].Title != "NOPM by cell" {
		t.Fatalf("first plot: %+v", files)
	}
	bars, names, _, withRatio := headlineBars(r, newPalette(r), analysis.RunFigure(r))
	if !withRatio {
		t.Fatal("no ratio beside the bars")
	}
	for i, n := range names {
		b := bars.bars[i]
		want := record.Median(doubleNOPM[n])
		if b.median != want {
			t.Errorf("%s: bar %.1f, want the median NOPM %.1f", n, b.median, want)
		}
		if n == "b0e0" && (!strings.Contains(b.label(), "x (") || strings.Contains(b.label(), "NOPM")) {
			t.Errorf("b0e0's label %q: want the ratio, not prefixed with its figure", b.label())
		}
	}
	if _, err := barChart(r, newPalette(r)); err != nil {
		t.Fatal(err)
	}
	old := tpccRun(flatTPS, doubleNOPM, false)
	if files := PlotFiles(old); files[0].Path != PlotsDir+"/tps.png" {
		t.Errorf("a run without headlines: %+v", files[0])
	}
	bars, names, _, _ = headlineBars(old, newPalette(old), analysis.RunFigure(old))
	for i, n := range names {
		if bars.bars[i].median != record.Median(flatTPS[n]) {
			t.Errorf("%s on tps: bar %.1f, want %.1f", n, bars.bars[i].median, record.Median(flatTPS[n]))
		}
	}
}
