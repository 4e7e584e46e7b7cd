package results

import (
	"math"
	"testing"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/engine"
	"benchmatrix/observe"
	"benchmatrix/record"
)

// With the server's cgroup sampled, the mechanism carries the server's own
// IO per transaction beside the whole device's, and the Conclusion's line
// labels which is which: the device did 36 writes per transaction for
// everyone, the server 2.
func TestMechanismServerOwnIO(t *testing.T) {
	t.Parallel()
	cols := observe.Columns()
	c := &record.Cell{Status: record.CellOK}
	for s := 0; s < 10; s++ {
		c.Intervals = append(c.Intervals, engine.Interval{Phase: engine.PhaseRun, Start: time.Duration(s) * time.Second, End: time.Duration(s+1) * time.Second, Events: 50})
		c.Metrics = append(c.Metrics, metricRow(cols, map[string]float64{
			"disk_writes_s": 1800, "disk_write_kb_s": 23600, "cg_writes_s": 100, "cg_write_kb_s": 800, "cg_reads_s": 5}))
	}
	analysis.Observe(c, cols)
	for k, v := range map[string]float64{"cg_writes_trx": 2, "cg_kb_trx": 16, "cg_reads_trx": 0.1, "disk_writes_trx": 36, "disk_kb_trx": 472} {
		if got, ok := c.Mechanism[k]; !ok || !near(got, v, 1e-9) {
			t.Errorf("%s = %v (%v), want %v", k, got, ok, v)
		}
	}
	want := "2.00 server writes, 16.0 KiB written by the server, 0.10 server reads, 36.00 device writes, 472.0 KiB written (whole device) per transaction"
	if got := mechanismLine(c.Mechanism); got != want {
		t.Errorf("mechanismLine = %q\nwant           %q", got, want)
	}
}

// metricRow is one sampled row of cols: the values given, NaN elsewhere.
func metricRow(cols []string, vals map[string]float64) []float64 {
	row := make([]float64, len(cols))
	for i, name := range cols {
		v, ok := vals[name]
		if !ok {
			v = math.NaN()
		}
		row[i] = v
	}
	return row
}
