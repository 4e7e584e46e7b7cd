package results

// The features' parts of the reports (features.Reports) as results writes
// them: the limits' environment rows, warnings and cell notes, the TPC-C
// section, the capacity's Conclusion lines and curves, and the
// topology's cell notes.

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/capacity"
	capreport "benchmatrix/capacity/report"
	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/limits"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/record/parts"
	"benchmatrix/section"
	"benchmatrix/server"
	topology "benchmatrix/topology/report"
	"benchmatrix/tpcc"
)

// withLimits gives a synthetic run a plan whose cells run under the given
// limits (by cell name; the rest under none), and the runner's records.
func withLimits(r *record.Run, lim map[string]catalog.LimitSet) *record.Run {
	seen := map[string]bool{}
	for i, c := range r.Cells {
		if !seen[c.Name] {
			seen[c.Name] = true
			r.Plan = append(r.Plan, record.PlanCell{Name: c.Name, Limits: lim[c.Name]})
		}
		if l, ok := lim[c.Name]; ok {
			r.Cells[i].Limits = &server.LimitsInForce{Requested: l, Mechanism: "cgroup v1", Device: "254:0 (vda)",
				ReadBack: map[string]string{"blkio.throttle.write_iops_device": "254:0 100"}}
			r.Cells[i].DiskCheck = &server.DiskCheck{Seconds: 3, Loops: 132, LoopsPerSec: 44, DeviceWriteIOPS: 99.9,
				FsyncAvgMs: 11.8, FsyncMaxMs: 40.2, CapWriteIOPS: 100, Ratio: 0.999}
		}
	}
	return r
}

// summary.md names the limits per group of cells, how they were applied
// and what the disk self-check measured; a run without limits says nothing.
func TestLimitsInSummary(t *testing.T) {
	t.Parallel()
	slow := catalog.LimitSet{DiskWriteIOPS: 100, DiskReadIOPS: 200}
	r := withLimits(synthRun(1, 1, flushCells()), map[string]catalog.LimitSet{"b1e1/threads=1": slow, "b1e1/threads=8": slow})
	var b strings.Builder
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| resource limits | disk_write_iops=100 disk_read_iops=200 (b1e1/threads=1, b1e1/threads=8); none (b0e1/threads=1, b0e1/threads=8, b0e0/threads=1, b0e0/threads=8) |",
		"| limits applied by | cgroup v1 on 254:0 (vda) (read back before each cell) |",
		"| disk self-check | cap 100 write IOPS: 99.9 device writes/s, 44 write+fsync/s, fsync avg 11.8 ms, max 40.2 ms",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	var plain strings.Builder
	if err := WriteMarkdown(&plain, synthRun(1, 1, flushCells())); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "limits") {
		t.Error("a run without limits mentions limits")
	}
}

// Limits are conditions, like the server's variables: a difference is
// listed in EnvDiff, per cell, and does not make the runs incomparable.
func TestLimitsInFingerprint(t *testing.T) {
	t.Parallel()
	slow := catalog.LimitSet{DiskWriteIOPS: 100}
	base := withLimits(synthRun(1, 1, flushCells()), map[string]catalog.LimitSet{"b1e1/threads=1": slow})
	faster := withLimits(synthRun(2, 1, flushCells()), map[string]catalog.LimitSet{"b1e1/threads=1": {DiskWriteIOPS: 3000}})
	same := withLimits(synthRun(3, 1, flushCells()), map[string]catalog.LimitSet{"b1e1/threads=1": slow})
	none := withLimits(synthRun(4, 1, flushCells()), nil)
	bf := ComputeFingerprint(base)
	if got := bf.Limits["b1e1/threads=1"]; got != "disk_write_iops=100" || len(bf.Limits) != 1 {
		t.Fatalf("fingerprint limits %v", bf.Limits)
	}
	for _, c := range []struct {
		new  *record.Run
		want []record.Mismatch
	}{
		{same, nil},
		{faster, []record.Mismatch{{Cell: "b1e1/threads=1", Key: "b1e1/threads=1: limits", Base: "disk_write_iops=100", New: "disk_write_iops=3000"}}},
		{none, []record.Mismatch{{Cell: "b1e1/threads=1", Key: "b1e1/threads=1: limits", Base: "disk_write_iops=100", New: "none"}}},
	} {
		nf := ComputeFingerprint(c.new)
		if d := bf.Diff(nf); len(d) != 0 {
			t.Errorf("limits made the runs incomparable: %v", d)
		}
		var got []record.Mismatch
		for _, m := range bf.EnvDiff(nf) {
			if strings.HasSuffix(m.Key, ": limits") {
				got = append(got, m)
			}
		}
		if len(got) != len(c.want) || len(got) > 0 && got[0] != c.want[0] {
			t.Errorf("EnvDiff limits = %v, want %v", got, c.want)
		}
	}
	// A cell only one run has is unmatched, not a difference.
	other := withLimits(synthRun(5, 1, flushCells()[2:]), nil)
	for _, m := range bf.EnvDiff(ComputeFingerprint(other)) {
		if strings.HasSuffix(m.Key, ": limits") {
			t.Errorf("unmatched cell listed: %v", m)
		}
	}
}

// bindingWarnings and writeBindingNote are the limits feature's warnings
// and cell note, as results calls them (features.Reports).
func bindingWarnings(r *record.Run) []string {
	return limits.Report.Warnings[0].Lines(section.Conclusion{Run: r})
}

var writeBindingNote = limits.Report.Notes[0].Write

// A cell's limits judged on its sampled cgroup columns (the path the runner
// takes through Observe), and the Conclusion's warning for one that never
// bound, with the data against the buffer pool for a read limit.
func TestBindingWarnings(t *testing.T) {
	cols := []string{"cg_cpu_throttled_periods_s", "cg_cpu_throttled_ms_s", "cg_reads_s", "cg_writes_s", "cpu_server_pct", "cg_memory_mb"}
	mk := func(name string, lim catalog.LimitSet, row []float64) record.Cell {
		c := record.Cell{Name: name, Status: record.CellOK, Result: &engine.Result{Events: 100},
			Limits: &parts.LimitsInForce{Requested: lim}, Effective: map[string]string{},
			Workload: engine.Spec{Engine: "oltp", Options: oltp.Options{Workload: "oltp_read_write", Tables: 4, TableSize: 100000}},
			Growth:   &record.Growth{BytesBefore: 100 << 20, BytesAfter: 100 << 20}}
		for i := 0; i < 20; i++ {
			c.Intervals = append(c.Intervals, engine.Interval{Phase: engine.PhaseRun, Start: 0, End: 1e9, Events: 100})
			c.Metrics = append(c.Metrics, row)
		}
		analysis.Observe(&c, cols)
		return c
	}
	r := &record.Run{Host: record.Host{Cores: 2}, Variables: map[string]string{"innodb_buffer_pool_size": "536870912"}}
	r.Cells = []record.Cell{
		mk("big-quota", catalog.LimitSet{CPUs: 8}, []float64{0, 0, 0, 0, 130, 150}),
		mk("read-cap", catalog.LimitSet{DiskReadIOPS: 200}, []float64{0, 0, 1, 0, 130, 150}),
		mk("small-quota", catalog.LimitSet{CPUs: 0.2}, []float64{9, 700, 0, 0, 20, 150}),
		mk("write-cap", catalog.LimitSet{DiskWriteIOPS: 50}, []float64{0, 0, 0, 50, 20, 150}),
		mk("small-vm", catalog.LimitSet{Memory: 2 << 30}, []float64{0, 0, 0, 0, 50, 150}),
	}
	for _, c := range r.Cells {
		if c.Binding == nil || len(c.Binding.Limits) != 1 {
			t.Fatalf("%s: binding %+v", c.Name, c.Binding)
		}
	}
	ws := bindingWarnings(r)
	all := strings.Join(ws, "\n")
	t.Log(all)
	if len(ws) != 3 {
		t.Fatalf("%d warnings, want 3 (the quota of 8, the read cap, the memory limit)", len(ws))
	}
	for _, want := range []string{
		"big-quota: cpus = 8 never throttled",
		"the host has 2 CPUs, fewer than the quota: the 8-CPU machine was not created",
		"read-cap: disk_read_iops = 200 never at the cap",
		"the 4 x 100k data (100 MiB) fits the 512M buffer pool: the disk read limit could not touch reads",
		"small-vm: memory = 2G never bound: the server's group peaked at 150 MiB of 2048 MiB (page cache included): the 2G machine was not created; the 512M buffer pool and the 4 x 100k data (100 MiB) fit in it with room to spare",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings do not say %q", want)
		}
	}
	if strings.Contains(all, "small-quota") || strings.Contains(all, "write-cap") {
		t.Error("a limit that bound is warned about")
	}
	if !strings.Contains(strings.Join(Conclude(r).Warnings, "\n"), "cpus = 8 never throttled") {
		t.Error("the Conclusion does not carry the warning")
	}
	var note strings.Builder
	writeBindingNote(&note, r.Cells[0])
	writeBindingNote(&note, r.Cells[2])
	for _, want := range []string{"- limits: **cpus = 8: throttled in 0 of 20 s (0 ms/s held back): did not bind**", "- limits: cpus = 0.2: throttled in 20 of 20 s (700 ms/s held back)\n"} {
		if !strings.Contains(note.String(), want) {
			t.Errorf("cell notes %q do not say %q", note.String(), want)
		}
	}
	// The same limit unbound in several cells is one line naming them.
	r.Cells = append(r.Cells, mk("small-vm-b", catalog.LimitSet{Memory: 2 << 30}, []float64{0, 0, 0, 0, 50, 180}),
		mk("small-vm-b", catalog.LimitSet{Memory: 2 << 30}, []float64{0, 0, 0, 0, 50, 160}))
	ws = bindingWarnings(r)
	all = strings.Join(ws, "\n")
	if len(ws) != 3 || !strings.Contains(all, "2 cells (small-vm, small-vm-b): memory = 2G never bound: the server's group peaked at 180 MiB of 2048 MiB") ||
		!strings.Contains(all, "(over all 3 runs of them)") {
		t.Errorf("grouped warnings:\n%s", all)
	}
	col, _ := record.ColumnNamed("limits_unbound")
	if got := col.Field(&r.Cells[0]); got != "cpus" {
		t.Errorf("limits_unbound = %q, want cpus", got)
	}
	if got := col.Field(&r.Cells[2]); got != "" {
		t.Errorf("limits_unbound of a binding quota = %q", got)
	}
}

// hasTPCC and writeTPCC are the TPC-C engine's summary.md section, as
// results writes it (features.Reports).
var (
	hasTPCC   = tpcc.Report.Sections[0].Applies
	writeTPCC = tpcc.Report.Sections[0].Write
)

// tpccResult is the engine.Result tpcc reports (tpcc/descriptor.go) for a
// 30 s window: new orders and payments committed, New-Order's rolled back,
// the restarts and errors, and the consistency check.
func tpccResult(newOrders, payments, rolledBack, deadlocks int64, checked bool) *engine.Result {
	win := 30 * time.Second
	perMin := func(n int64) float64 { return float64(n) / win.Minutes() }
	events := newOrders + rolledBack + payments + 20 + 21 + 19
	r := &tpcc.Result{
		Sysbench: &oltp.Result{Result: engine.Result{Elapsed: win, Events: events}},
		NOPM:     perMin(newOrders), TPM: perMin(newOrders + payments + 60),
		Types: []tpcc.TypeStats{
			{Type: "new_order", Committed: newOrders, RolledBack: rolledBack, Restarts: deadlocks, PerMin: perMin(newOrders), Latency: engine.Latency{Avg: 30, P95: 90, P99: 200}},
			{Type: "payment", Committed: payments, PerMin: perMin(payments), Latency: engine.Latency{Avg: 15, P95: 60, P99: 120}},
			{Type: "order_status", Committed: 20, PerMin: perMin(20), Latency: engine.Latency{Avg: 3, P95: 6, P99: 15}},
			{Type: "delivery", Committed: 21, PerMin: perMin(21), Latency: engine.Latency{Avg: 60, P95: 120, P99: 480}},
			{Type: "stock_level", Committed: 19, PerMin: perMin(19), Latency: engine.Latency{Avg: 6, P95: 15, P99: 37}},
		},
		Errors: map[uint16]int64{0: rolledBack, 1213: deadlocks},
	}
	if checked {
		r.Check = &tpcc.CheckResult{Passed: true, Conditions: []tpcc.Condition{{Set: 1, Number: 1, What: "W_YTD = sum(D_YTD)"}}}
	}
	return r.Engine()
}

// A run with tpcc cells has summary.md's TPC-C section (pinned by a golden
// file): NOPM, TPM, rollbacks, retries, errors by code and the consistency
// check per cell, then each type's figures; a run without none.
func TestGoldenTPCCSection(t *testing.T) {
	t.Parallel()
	spec := engine.Spec{Engine: tpcc.Name, Options: tpcc.DefaultOptions()}
	r := &record.Run{Experiment: "tpcc-durability", Baseline: "b1e1"}
	add := func(name string, rep int, res *engine.Result, err string) {
		c := record.Cell{Name: name, Scenario: name, Repeat: rep, Index: len(r.Cells), Status: record.CellOK, Result: res, Workload: spec}
		if err != "" {
			c.Status, c.Error, c.Result = record.CellFailed, err, nil
		}
		r.Cells = append(r.Cells, c)
	}
	add("b1e1", 1, tpccResult(900, 880, 9, 2, true), "")
	add("b0e0", 1, tpccResult(2400, 2350, 25, 7, true), "")
	add("b1e1", 2, tpccResult(1000, 990, 10, 0, true), "")
	add("b0e0", 2, nil, "run: consistency check failed: table set 1 condition 8 (W_YTD = sum(H_AMOUNT) of the warehouse): 1 violations")
	add("b1e1", 3, tpccResult(950, 930, 11, 1, true), "")
	add("b0e0", 3, tpccResult(2600, 2500, 24, 5, true), "")
	if !hasTPCC(r) {
		t.Fatal("a run of tpcc cells has no TPC-C section")
	}
	var b bytes.Buffer
	if err := writeTPCC(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| b1e1 | 3    | 1900 |", // NOPM: the median run's 950 new orders in 30 s
		"1213: 3, new_order_rollback: 30",
		"passed (3 of 3)",
		"**failed in 1 of 3**",
	} {
		if !strings.Contains(strings.Join(strings.Fields(b.String()), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("section lacks %q:\n%s", want, b.String())
		}
	}
	checkGolden(t, "tpcc-section.md", b.Bytes())

	oltpRun := flushRun("", map[string][]float64{"b1e1": {100}, "b0e1": {200}, "b0e0": {300}})
	if hasTPCC(oltpRun) {
		t.Error("a run without tpcc cells has a TPC-C section")
	}
}

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
	capLines, _ := capreport.Lines(r, analysis.ByRepeat(r))
	text := strings.Join(capLines, "\n")
	for _, want := range []string{
		"b1e1: **2390/s** at p99 < 50ms (median of 6 repeats: 2300, 2350, 2380, 2400, 2450, 2500; 95% CI 2300-2500/s over the rounds; the searches bracket it in 2300-2700/s)",
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
	lines, _ := capreport.Lines(r, analysis.ByRepeat(r))
	text := strings.Join(lines, "\n")
	if !strings.Contains(text, "b0e0 against b1e1 at p99 < 50ms: 1 paired round, too few for a 95% interval; the searches' brackets allow 3.70–4.32x") {
		t.Errorf("one round:\n%s", text)
	}
	r = capacityRun(map[string][]float64{"b1e1": {0, 0}, "b0e0": {8000, 8100}})
	lines, _ = capreport.Lines(r, analysis.ByRepeat(r))
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
	b, err := capreport.Figure(r, "b1e1")
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
		lines, _ := capreport.Lines(r, analysis.ByRepeat(r))
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

// writeTopology is the topology's cell note, as results writes it.
var writeTopology = topology.Report.Notes[0].Write

func TestTopologyLinesInSummary(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeTopology(&b, record.Cell{Topology: &record.TopologyResult{Kind: "galera",
		Events: []record.NodeEvent{{At: 10.02, Node: 2, Action: "pause"}, {At: 14, Node: 2, Action: "start", Error: "node2 did not come back"}},
		Healed: []string{"node2 resumed"},
		Checks: []record.DataCheck{{When: "after the cell", Equal: true, Summary: "data after the cell: equal on 3 nodes"}}}})
	want := "- node events: t=10.0s node2 pause, t=14.0s node2 start FAILED: node2 did not come back; after the cell: node2 resumed\n" +
		"- data after the cell: equal on 3 nodes\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	writeTopology(&b, record.Cell{})
	if b.Len() != 0 {
		t.Fatalf("a single-server cell wrote %q", b.String())
	}
}

// A rate whose full-length run missed the target is never stated as the
// capacity: a stalled confirmation leaves its repeat out of the median and
// the ratio, says why in a warning, and a cell with no confirmed repeat
// says so instead of a number.
func TestCapacityUnconfirmedNotCounted(t *testing.T) {
	t.Parallel()
	r := capacityRun(map[string][]float64{
		"b1e1": {500, 520},
		"b0e0": {1500, 1600},
	})
	slo := r.Cells[0].Capacity.SLO
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Name == "b1e1" && c.Repeat == 1 || c.Name == "b0e0" {
			run := &capacity.Step{Rate: c.Capacity.Rate, Seconds: 10, Events: 5000, Over: 60, SlowSeconds: 1, Pct: 54.75}
			capacity.Judge(slo, run)
			if run.Verdict != capacity.Stalled {
				t.Fatalf("fixture: %s (%s)", run.Verdict, run.Why)
			}
			c.Capacity.Run = run
		}
	}
	lines, warnings := capreport.Lines(r, analysis.ByRepeat(r))
	text := strings.Join(lines, "\n")
	for _, want := range []string{"b0e0: **no confirmed capacity** at p99 < 50ms", "(2 of 2 repeats"} {
		if !strings.Contains(text, want) {
			t.Errorf("capacity lines lack %q:\n%s", want, text)
		}
	}
	if !strings.Contains(text, "b1e1: **520/s** at p99 < 50ms (median of 1 repeat;") || !strings.Contains(text, "1 confirmation missed the target, not counted") {
		t.Errorf("b1e1's line counts the stalled repeat:\n%s", text)
	}
	if w := strings.Join(warnings, "\n"); !strings.Contains(w, "b1e1 (repeat 1): the run at the rate the search found (500/s) missed p99 < 50ms, so it is not counted") || !strings.Contains(w, "a stall, not an overload") {
		t.Errorf("warnings:\n%s", w)
	}
	for _, c := range r.Cells {
		v, ok := c.Capacity.Value()
		if c.Capacity.Run.Verdict != capacity.Meets && ok {
			t.Errorf("%s repeat %d: capacity %v stated although its run %s", c.Name, c.Repeat, v, c.Capacity.Run.Verdict)
		}
	}
}

// The wall-time line counts the capacity searches apart from "other" (a
// capacity run spent 222 of its 247 s there, all of it "other"), and says
// nothing of them in a run without one.
func TestAccountingCountsTheSearch(t *testing.T) {
	t.Parallel()
	r := capacityRun(map[string][]float64{"b1e1": {500}, "b0e0": {1500}})
	r.Finished = r.Started.Add(110 * time.Second)
	for i := range r.Cells {
		r.Cells[i].Capacity.SearchSeconds = 30
	}
	ts := Accounting(r, 1)
	if ts.SearchSeconds != 60 || math.Abs(ts.OtherSeconds-(110-1-60-40)) > 1e-9 {
		t.Errorf("accounting: %+v", ts)
	}
	var b bytes.Buffer
	writeTimeEnv(&b, &ts)
	if !strings.Contains(b.String(), "prewarm 0.0 s, capacity search 60.0 s, other 9.0 s;") {
		t.Errorf("wall time line: %s", b.String())
	}
	ts.SearchSeconds = 0
	b.Reset()
	writeTimeEnv(&b, &ts)
	if strings.Contains(b.String(), "capacity search") {
		t.Errorf("a run without a search: %s", b.String())
	}
}
