package results

import (
	"math"
	"strings"
	"testing"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/record/parts"
)

// analysis.ObserveWarmth: the time to a steady state from the engine's first
// second (warm-up included), the latest of the series; the data against
// the pool in the binding record; a warning under a memory limit when the
// data fits.
func TestObserveWarmth(t *testing.T) {
	t.Parallel()
	cols := []string{"bp_disk_reads_s", "cg_reads_s", "cg_read_kb_s"}
	c := record.Cell{Name: "cold", Status: record.CellOK, Workload: engine.Spec{Engine: "oltp", Options: oltp.Options{StorageEngine: "innodb", Tables: 4, TableSize: 25000}},
		Effective: map[string]string{"innodb_buffer_pool_size": "536870912"},
		Limits:    &parts.LimitsInForce{Requested: catalog.LimitSet{Memory: 2 << 30, CPUs: 1}},
		Growth:    &record.Growth{BytesBefore: 95 << 20, BytesAfter: 95 << 20}}
	for i := 0; i < 60; i++ {
		tps := 400.0
		reads := 0.0
		if i < 30 {
			tps = 400 * float64(i+1) / 30
			reads = 2000 * float64(30-i) / 30
		}
		if i < 10 { // the buffer-pool misses settle later than tps would alone
			reads = 2000
		}
		phase := engine.PhaseRun
		c.Intervals = append(c.Intervals, engine.Interval{Phase: phase, Start: secs(i), End: secs(i + 1), Events: int64(tps)})
		c.Metrics = append(c.Metrics, []float64{reads, reads, reads * 16})
	}
	analysis.ObserveWarmth(&c, cols, analysis.DefaultSettleRule)
	if c.Steady == nil || !c.Steady.Settled {
		t.Fatalf("steady: %+v", c.Steady)
	}
	if c.Steady.Seconds < 20 || c.Steady.Seconds > 30 {
		t.Errorf("steady after %.0f s, want 20-30: %+v", c.Steady.Seconds, c.Steady.Series)
	}
	if len(c.Steady.Series) != 3 {
		t.Errorf("series: %+v", c.Steady.Series)
	}
	col, _ := record.ColumnNamed("steady_s")
	if v, ok := col.Value(&c); !ok || v != c.Steady.Seconds {
		t.Errorf("steady_s = %v, want %v", v, c.Steady.Seconds)
	}
	d := c.Binding.Data
	if d == nil || !d.Fits || d.PoolBytes != 512<<20 || math.Abs(d.Ratio-95.0/512) > 1e-9 {
		t.Fatalf("data: %+v", d)
	}
	r := &record.Run{Cells: []record.Cell{c}}
	w := dataWarnings(r)
	if len(w) != 1 || !strings.Contains(w[0], "the data (95 MiB) fits the 512M buffer pool") || !strings.Contains(w[0], "2G machine was not created") {
		t.Errorf("warnings: %q", w)
	}
	// The same data on a 64M pool: 1.5x the pool, no warning.
	c2 := c
	c2.Binding = nil
	c2.Effective = map[string]string{"innodb_buffer_pool_size": "64M"}
	analysis.ObserveWarmth(&c2, cols, analysis.DefaultSettleRule)
	if d := c2.Binding.Data; d.Fits || !strings.Contains(d.Text, "is 1.5x the 64M buffer pool") {
		t.Errorf("data: %+v", d)
	}
	if w := dataWarnings(&record.Run{Cells: []record.Cell{c2}}); len(w) != 0 {
		t.Errorf("warnings: %q", w)
	}
	// MyISAM: its data is held by the page cache, against the memory limit.
	c3 := c
	c3.Binding = nil
	c3.Workload = engine.Spec{Engine: "oltp", Options: oltp.Options{StorageEngine: "MyISAM", Tables: 4, TableSize: 25000}}
	analysis.ObserveWarmth(&c3, cols, analysis.DefaultSettleRule)
	if d := c3.Binding.Data; !d.Fits || !strings.Contains(d.Text, "page cache of the 2G memory limit") {
		t.Errorf("data: %+v", d)
	}
	// A cell that never settles has no steady_s.
	c4 := record.Cell{Name: "climb", Status: record.CellOK}
	for i := 0; i < 30; i++ {
		c4.Intervals = append(c4.Intervals, engine.Interval{Phase: engine.PhaseRun, Start: secs(i), End: secs(i + 1), Events: int64(10 * (i + 1))})
	}
	analysis.ObserveWarmth(&c4, nil, analysis.DefaultSettleRule)
	if _, ok := col.Value(&c4); c4.Steady == nil || c4.Steady.Settled || ok {
		t.Errorf("climb: %+v", c4.Steady)
	}
	if c4.Binding != nil {
		t.Errorf("no table sizes, no data record: %+v", c4.Binding)
	}
}

func secs(i int) time.Duration { return time.Duration(i) * time.Second }
