package results

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"benchmatrix/engine"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/tpcc"
)

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
