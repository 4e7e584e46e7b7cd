package results

// The features' parts of the reports (features.Reports) as results writes
// them: the limits' environment rows, warnings and cell notes, and the
// TPC-C section.

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/limits"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/record/parts"
	"benchmatrix/section"
	"benchmatrix/server"
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
