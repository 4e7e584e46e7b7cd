package results

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/capacity"
	"benchmatrix/engine"
	"benchmatrix/record"
)

// capacityRun is a two-scenario run whose cells carry capacity searches:
// per round, b1e1's and b0e0's capacity (0: no rate met the target).
func capacityRun(caps map[string][]float64) *record.Run {
	slo, _ := capacity.ParseSLO("p99 < 50ms")
	r := &record.Run{Experiment: "capacity", Baseline: "b1e1", Order: "grouped",
		Manifest: "[experiment]\nname = \"capacity\"\nbaseline = \"b1e1\"\nslo = \"p99 < 50ms\"\nexpect = [\"capacity(b0e0) > 2 * capacity(b1e1)\"]\n" +
			"[workload]\nname = \"oltp_insert\"\n[scenarios]\nb1e1 = { sync_binlog = 1 }\nb0e0 = { sync_binlog = 0 }\n"}
	for rep := 1; rep <= len(caps["b1e1"]); rep++ {
		for _, sc := range []string{"b1e1", "b0e0"} {
			v := caps[sc][rep-1]
			out := &capacity.Outcome{SLO: slo, Status: capacity.Found, Capacity: v, Low: v, High: v * 1.08}
			for _, f := range []float64{0.25, 0.5, 1, 1.08, 0.9, 1, 1} {
				st := capacity.Step{Rate: v * f, Events: 1000, P50: 2 * f, Pct: 45 * f * f}
				capacity.Judge(slo, &st)
				if f > 1 {
					st.Over, st.Pct = 50, 80
					capacity.Judge(slo, &st)
				}
				out.Steps = append(out.Steps, st)
			}
			run := &capacity.Step{Rate: v, Events: 20000, Pct: 40, P50: 2}
			if v == 0 {
				out = &capacity.Outcome{SLO: slo, Status: capacity.Below, High: 1, Steps: []capacity.Step{{Rate: 1, Events: 10, Over: 5, Pct: 300}}}
				run = &capacity.Step{Rate: 1, Events: 20, Over: 9, Pct: 300}
			}
			capacity.Judge(slo, run)
			res := &engine.Result{Elapsed: 20 * time.Second, Events: run.Events}
			r.Cells = append(r.Cells, record.Cell{Name: sc, Scenario: sc, Repeat: rep, Index: len(r.Cells), Status: record.CellOK, Result: res,
				Capacity: &record.CellCapacity{SLO: slo, Searched: true, Search: out, Rate: max(v, 1), Run: run}})
		}
	}
	return r
}

func TestCapacityConclusion(t *testing.T) {
	t.Parallel()
	r := capacityRun(map[string][]float64{
		"b1e1": {2400, 2300, 2500, 2350, 2450, 2380},
		"b0e0": {8400, 9000, 8800, 8500, 9100, 8700},
	})
	c := Conclude(r)
	text := strings.Join(c.Capacity, "\n")
	for _, want := range []string{
		"b1e1: **2390/s** at p99 < 50ms (median of 6 repeats: 2300, 2350, 2380, 2400, 2450, 2500; the searches bracket it in 2300-2700/s)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("capacity lines lack %q:\n%s", want, text)
		}
	}
	// One ratio: the Conclusion's ratio line is on capacity (the runs at
	// the capacity all served 20,000 events, so a tps line would say
	// 1.00x), and the capacity lines do not repeat it.
	var conc bytes.Buffer
	WriteConclusion(&conc, r)
	for _, want := range []string{"- b0e0: **3.6", "x** b1e1 capacity at p99 < 50ms (95% CI ", "better in 6 of 6 rounds)"} {
		if !strings.Contains(conc.String(), want) {
			t.Errorf("the Conclusion's ratio line lacks %q:\n%s", want, conc.String())
		}
	}
	for _, bad := range []string{"b1e1 tps", "1.00x", "sustains **"} {
		if strings.Contains(conc.String(), bad) {
			t.Errorf("the Conclusion has %q: a second ratio beside the capacity's:\n%s", bad, conc.String())
		}
	}
	held := false
	for _, e := range c.Expectations {
		held = held || e.Text == "capacity(b0e0) > 2 * capacity(b1e1)" && e.Status == analysis.ExpectHeld
	}
	if !held {
		t.Errorf("the capacity expectation is not held: %+v", c.Expectations)
	}
	var b bytes.Buffer
	WriteConclusion(&b, r)
	if !strings.Contains(b.String(), "Capacity: the highest open-loop rate") {
		t.Errorf("the Conclusion lacks the capacity lines:\n%s", b.String())
	}
}

func TestCapacityConclusionFewRoundsAndBelow(t *testing.T) {
	t.Parallel()
	r := capacityRun(map[string][]float64{"b1e1": {2000}, "b0e0": {8000}})
	lines, _ := capacityLines(r, analysis.ByRepeat(r))
	text := strings.Join(lines, "\n")
	if !strings.Contains(text, "b0e0 against b1e1 at p99 < 50ms: 1 paired round, too few for a 95% interval; the searches' brackets allow 3.70–4.32x") {
		t.Errorf("one round:\n%s", text)
	}
	r = capacityRun(map[string][]float64{"b1e1": {0, 0}, "b0e0": {8000, 8100}})
	lines, _ = capacityLines(r, analysis.ByRepeat(r))
	text = strings.Join(lines, "\n")
	for _, want := range []string{"b1e1: **above the SLO even at the lowest rate** (p99 < 50ms missed even at 1/s, the lowest rate tried)",
		"b0e0 against b1e1 at p99 < 50ms: no round in which both sustained a rate"} {
		if !strings.Contains(text, want) {
			t.Errorf("below: lacks %q:\n%s", want, text)
		}
	}
	if v := record.CellValue(&r.Cells[0], "capacity"); v != 0 {
		t.Errorf("a cell that met the target at no rate: capacity %v, want 0", v)
	}
}

func TestCapacityCurvePlot(t *testing.T) {
	t.Parallel()
	r := capacityRun(map[string][]float64{"b1e1": {2400, 2300}, "b0e0": {8400, 9000}})
	var files []string
	for _, f := range PlotFiles(r) {
		files = append(files, f.Path)
	}
	if !strings.Contains(strings.Join(files, " "), "plots/capacity-b1e1.png plots/capacity-b0e0.png") {
		t.Fatalf("plot files %v", files)
	}
	b, err := capacityFigure(r, "b1e1")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil || img.Bounds().Dx() < 500 {
		t.Fatalf("figure: %v", err)
	}
	if os.Getenv("CAPACITY_PLOT_OUT") != "" { // to look at it
		_ = os.WriteFile(filepath.Join(os.Getenv("CAPACITY_PLOT_OUT"), "capacity-b1e1.png"), b, 0o644)
	}
}

// compare tests the capacity where the cells have one: b0e0's fell from
// about 8,700/s to about 4,400/s over six repeats, a worsening.
func TestCompareCapacity(t *testing.T) {
	t.Parallel()
	base := capacityRun(map[string][]float64{
		"b1e1": {2400, 2300, 2500, 2350, 2450, 2380},
		"b0e0": {8400, 9000, 8800, 8500, 9100, 8700},
	})
	next := capacityRun(map[string][]float64{
		"b1e1": {2410, 2320, 2480, 2360, 2440, 2390},
		"b0e0": {4400, 4500, 4300, 4450, 4350, 4420},
	})
	c := mustCompare(t, base, next, DefaultCompareOptions())
	m := metricOf(t, c, "b0e0", "capacity")
	if m.Verdict != Worse || !m.HigherIsBetter || !(m.DeltaPct < -40) {
		t.Errorf("b0e0 capacity: %+v", m)
	}
	if m := metricOf(t, c, "b1e1", "capacity"); m.Verdict != Unchanged {
		t.Errorf("b1e1 capacity: %s (%+.1f%%)", m.Verdict, m.DeltaPct)
	}
	// A run without targets has no capacity row.
	plain := flushRun(`"b1e1 < b0e0"`, map[string][]float64{"b1e1": {1000, 1010}, "b0e1": {1500, 1490}, "b0e0": {2000, 2020}})
	for _, cc := range mustCompare(t, plain, plain, DefaultCompareOptions()).Cells {
		for _, mc := range cc.Metrics {
			if mc.Metric == "capacity" {
				t.Errorf("%s: a capacity row without a target", cc.Name)
			}
		}
	}
}

// A capacity curve's log axes carry labels even when the steps span less
// than a decade (the slow-disk search: 8/s to 32/s had only "10").
func TestLogTicks125LabelsShortRanges(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (logTicks125{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	if got := strings.Join(labels(6, 40), " "); got != "10 20" {
		t.Errorf("6-40: labels %q, want \"10 20\"", got)
	}
	if got := strings.Join(labels(0.5, 300), " "); got != "0.5 1 2 5 10 20 50 100 200" {
		t.Errorf("0.5-300: labels %q", got)
	}
	if got := labels(11, 18); len(got) < 2 {
		t.Errorf("11-18: labels %q, want every digit labelled when 1-2-5 gives fewer than two", got)
	}
	if got := strings.Join(labels(1, 1e6), " "); !strings.Contains(got, "1000") || strings.Contains(got, "2000") {
		t.Errorf("1-1e6: labels %q, want the powers of ten only", got)
	}
}

// Without a baseline the Conclusion still states the capacity ratio of the
// two cells it searched (issue 40: "no baseline to compare with" although
// both capacities were printed one line apart).
func TestCapacityRatioWithoutBaseline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		caps map[string][]float64
		want string
	}{
		{map[string][]float64{"b1e1": {2400, 2300, 2500, 2350, 2450, 2380}, "b0e0": {8400, 9000, 8800, 8500, 9100, 8700}},
			"b0e0 against b1e1 at p99 < 50ms (no baseline named: against the first cell searched): **3.6"},
		{map[string][]float64{"b1e1": {2000}, "b0e0": {8000}},
			"b0e0 against b1e1 at p99 < 50ms (no baseline named: against the first cell searched): **4.00x** capacity over 1 paired round; 1 paired round, too few for a 95% interval; the searches' brackets allow 3.70–4.32x"},
	} {
		r := capacityRun(tc.caps)
		r.Baseline = ""
		r.Manifest = strings.Replace(r.Manifest, "baseline = \"b1e1\"\n", "", 1)
		lines, _ := capacityLines(r, analysis.ByRepeat(r))
		text := strings.Join(lines, "\n")
		if !strings.Contains(text, tc.want) {
			t.Errorf("no baseline: lacks %q:\n%s", tc.want, text)
		}
		if len(tc.caps["b1e1"]) == 6 && !strings.Contains(text, "(95% CI ") {
			t.Errorf("six rounds: no interval:\n%s", text)
		}
		var b bytes.Buffer
		WriteConclusion(&b, r)
		if !strings.Contains(b.String(), "(no baseline named: against the first cell searched)") {
			t.Errorf("the Conclusion lacks the capacity ratio:\n%s", b.String())
		}
	}
}
