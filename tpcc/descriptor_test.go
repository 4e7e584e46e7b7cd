package tpcc

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchmatrix/engine"
	"benchmatrix/oltp"
	"benchmatrix/record"
)

func TestDescriptorResolve(t *testing.T) {
	o, err := Descriptor.Resolve(Name, []engine.Setting{{Key: "workload", Value: "tpcc"}, {Key: "warehouses", Value: "3"},
		{Key: "tables", Value: "2"}, {Key: "threads", Value: "8"}, {Key: "trx_level", Value: "RC"}, {Key: "use_fk", Value: "0"},
		{Key: "table_size", Value: "5"}, {Key: "mix", Value: "45,43,4,4,4"}, {Key: "check", Value: "1"}}, 30*time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	to := o.(Options)
	if to.Scale != 3 || to.Tables != 2 || to.Threads != 8 || to.TrxLevel != "RC" || to.UseFK || !to.CheckAfter || len(to.Mix) != 5 {
		t.Errorf("resolved %+v", to)
	}
	c := o.Common()
	if c.Time != 30*time.Second || c.Warmup != 5*time.Second || c.ReportInterval != time.Second || c.Threads != 8 {
		t.Errorf("common %+v", c)
	}
	d := o.Data()
	if len(d.Tables) != 18 || !d.Changes || !strings.Contains(d.Shape, "scale=3") || d.Rows() < 3000000 {
		t.Errorf("data %+v (rows %d)", d, d.Rows())
	}
	// The JSON names the workload, so that run.json binds to tpcc again.
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Descriptor.Decode(b)
	if err != nil || back.(Options).Scale != 3 || back.Name() != "tpcc" || !strings.Contains(string(b), `"workload":"tpcc"`) {
		t.Errorf("decode %s: %v %v", b, back, err)
	}
	// Defaults in a manifest: one warehouse, not sysbench-tpcc's 100.
	o, _ = Descriptor.Resolve(Name, nil, time.Second, 0)
	if o.(Options).Scale != 1 {
		t.Errorf("default scale %d", o.(Options).Scale)
	}
	for _, bad := range []engine.Setting{{Key: "scale", Value: "0"}, {Key: "trx_level", Value: "XX"}, {Key: "mix", Value: "1,2"}, {Key: "threads", Value: "0"}} {
		if err := Descriptor.CheckKey(bad.Key, bad.Value); err == nil {
			t.Errorf("%s = %s accepted", bad.Key, bad.Value)
		}
	}
	if Descriptor.IsKey("table_size") || !Descriptor.IsKey("warehouses") || !Descriptor.IsKey("threads") {
		t.Error("IsKey")
	}
}

func TestEngineResult(t *testing.T) {
	r := &Result{Sysbench: &oltp.Result{Result: engine.Result{Events: 100, Elapsed: 30 * time.Second}}, NOPM: 80, TPM: 190,
		Types:  []TypeStats{{Type: "new_order", Committed: 40, RolledBack: 1, PerMin: 80, Restarts: 2}, {Type: "payment", Committed: 55, PerMin: 110}},
		Errors: map[uint16]int64{0: 1, 1213: 2}}
	e := r.Engine()
	if e.Metrics["nopm"] != 80 || e.Metrics["tpm"] != 190 || e.Metrics["new_order_per_min"] != 80 || e.Metrics["restarts"] != 2 ||
		e.ErrorsByCode["1213"] != 2 || e.ErrorsByCode["new_order_rollback"] != 1 || e.Events != 100 {
		t.Errorf("%+v", e)
	}
	iv := Interval{Interval: engine.Interval{Start: 0, End: 2 * time.Second, Events: 10}, NewOrders: 4, Committed: 9}
	iv.Types[NewOrder].Committed = 4
	ei := iv.Engine()
	if ei.Metrics["nopm"] != 120 || ei.Metrics["tpm"] != 270 || ei.Metrics["new_order_per_min"] != 120 {
		t.Errorf("%+v", ei.Metrics)
	}
}

// cells.csv has each type's rate and latency (issue 29): record's columns
// name tpcc's five types, are filled from a tpcc result and empty for a
// result without them (the other engines').
func TestCellsColumnsPerType(t *testing.T) {
	var names []string
	for _, ty := range Types()[:5] {
		names = append(names, ty.String())
	}
	if strings.Join(names, ",") != strings.Join(record.TPCCTypes, ",") {
		t.Fatalf("record.TPCCTypes %v, tpcc's types %v", record.TPCCTypes, names)
	}
	r := &Result{Sysbench: &oltp.Result{Result: engine.Result{Events: 100, Elapsed: 30 * time.Second}}, NOPM: 80, TPM: 190}
	for i, n := range names {
		r.Types = append(r.Types, TypeStats{Type: n, Committed: int64(10 * (i + 1)), PerMin: float64(20 * (i + 1)),
			Latency: engine.Latency{Avg: 1.5, P95: float64(i + 2), P99: float64(i + 3)}})
	}
	tpccCell := &record.Cell{Status: record.CellOK, Result: r.Engine()}
	other := &record.Cell{Status: record.CellOK, Result: &engine.Result{Elapsed: time.Second, Events: 5}}
	for i, n := range names {
		want := map[string]string{n + "_per_min": strconv.Itoa(20*(i+1)) + ".0", n + "_avg_ms": "1.500",
			n + "_p95_ms": strconv.Itoa(i+2) + ".000", n + "_p99_ms": strconv.Itoa(i+3) + ".000"}
		for col, w := range want {
			c, ok := record.ColumnNamed(col)
			if !ok {
				t.Fatalf("cells.csv has no %s", col)
			}
			if got := c.Field(tpccCell); got != w {
				t.Errorf("%s: %q, want %q", col, got, w)
			}
			if got := c.Field(other); got != "" {
				t.Errorf("%s of a result without tpcc figures: %q", col, got)
			}
		}
	}
}
