package results

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/capacity"
	"benchmatrix/engine"
	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/observe"
	"benchmatrix/record"
)

// flushRun is a flush.toml-like run: b1e1 (baseline), b0e1, b0e0 in
// interleaved rounds with the given tps per round.
func flushRun(expect string, tps map[string][]float64) *record.Run {
	r := &record.Run{Experiment: "flush", Baseline: "b1e1", Order: "grouped",
		Manifest: "[experiment]\nname = \"flush\"\nbaseline = \"b1e1\"\nexpect = [" + expect + "]\n[workload]\nname = \"oltp_insert\"\n" +
			"[scenarios]\nb1e1 = { sync_binlog = 1 }\nb0e1 = { sync_binlog = 0 }\nb0e0 = { sync_binlog = 0, innodb_flush_log_at_trx_commit = 0 }\n"}
	rounds := len(tps["b1e1"])
	for rep := 1; rep <= rounds; rep++ {
		for _, sc := range []string{"b1e1", "b0e1", "b0e0"} {
			v := tps[sc][rep-1]
			res := &engine.Result{Elapsed: 10 * time.Second, Events: int64(v * 10)}
			r.Cells = append(r.Cells, record.Cell{Name: sc, Scenario: sc, Repeat: rep, Index: len(r.Cells), Status: record.CellOK, Result: res})
		}
	}
	return r
}

func TestConcludeSixRounds(t *testing.T) {
	t.Parallel()
	r := flushRun(`"b1e1 < b0e1 < b0e0", "b0e0 > 3 * b1e1"`, map[string][]float64{
		"b1e1": {1000, 1100, 950, 1020, 980, 1050},
		"b0e1": {2010, 2190, 1930, 2050, 1950, 2120},
		"b0e0": {4500, 4700, 4400, 4650, 4300, 4800},
	})
	c := Conclude(r)
	if len(c.Ratios) != 2 || c.Nothing {
		t.Fatalf("conclusion %+v", c)
	}
	b0e1 := c.Ratios[0]
	if b0e1.Cell != "b0e1" || !b0e1.Ratio.CIOK || !near(b0e1.Ratio.P, 2.0/64, 1e-12) || b0e1.Ratio.Above != 6 {
		t.Errorf("b0e1: %+v", b0e1)
	}
	for _, e := range c.Expectations {
		if e.Status != analysis.ExpectHeld {
			t.Errorf("expectation %q: %s (%s)", e.Text, e.Status, e.Detail)
		}
	}
	if err := CheckExpectations(r); err != nil {
		t.Errorf("CheckExpectations: %v", err)
	}
	var b bytes.Buffer
	WriteConclusion(&b, r)
	for _, want := range []string{
		"- b0e1: **2.01x** b1e1 tps (95% CI 1.99–2.03, p=0.031, significant, better in 6 of 6 rounds)",
		"- `b1e1 < b0e1 < b0e0`: **held** (b0e1 / b1e1 = 2.01 (p=0.031, in 6 of 6 rounds); b0e0 / b0e1 = 2.24 (p=0.031, in 6 of 6 rounds))",
		"- `b0e0 > 3 * b1e1`: **held** (b0e0 / 3×b1e1 = 1.50",
		// The spread of each cell is large, the pairing cancels it:
		"- 3 cells are noisy: b1e1 (CoV 5.2% > 5%), b0e1 (95% CI ±7.9% > ±5%), b0e0 (95% CI ±6.0% > ±5%)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("conclusion lacks %q:\n%s", want, b.String())
		}
	}
}

func TestConcludeBrokenExpectation(t *testing.T) {
	t.Parallel()
	// The busy-host run of the issue: b1e1 beat b0e1 in every round.
	r := flushRun(`"b1e1 < b0e1 < b0e0"`, map[string][]float64{
		"b1e1": {2060, 2100, 1990, 2050, 2080, 2010},
		"b0e1": {1564, 1600, 1500, 1580, 1550, 1620},
		"b0e0": {13787, 13000, 12500, 13400, 13100, 13900},
	})
	err := CheckExpectations(r)
	var ee *ExpectationError
	if !errors.As(err, &ee) || exitcode.Of(err) != exitcode.Regression || !strings.Contains(err.Error(), "b0e1 / b1e1 = 0.76") {
		t.Fatalf("CheckExpectations = %v (exit %d)", err, exitcode.Of(err))
	}
	c := Conclude(r)
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "expectation broken: b1e1 < b0e1 < b0e0") {
		t.Errorf("warnings %q", c.Warnings)
	}
}

func TestConcludeTooFewRepeats(t *testing.T) {
	t.Parallel()
	r := flushRun(`"b1e1 < b0e1"`, map[string][]float64{
		"b1e1": {1000, 1100, 950}, "b0e1": {2010, 2190, 1930}, "b0e0": {4500, 4700, 4400},
	})
	c := Conclude(r)
	if !c.Nothing || c.Expectations[0].Status != analysis.ExpectNotShown || CheckExpectations(r) != nil {
		t.Errorf("3 rounds: %+v", c)
	}
	if w := strings.Join(c.Warnings, "\n"); !strings.Contains(w, "too few repeats: 3 paired rounds") || !strings.Contains(w, "smallest possible p is 0.250") {
		t.Errorf("warnings %q", c.Warnings)
	}
}

// A rising trend over repeats (the warm-up report: 125 → 137 → 142 and on)
// is flagged as an order effect.
func TestConcludeTrend(t *testing.T) {
	t.Parallel()
	r := flushRun(`"b1e1 < b0e1"`, map[string][]float64{
		"b1e1": {125, 137, 142, 146, 149, 151}, "b0e1": {250, 251, 249, 252, 250, 251}, "b0e0": {500, 501, 499, 502, 500, 500},
	})
	w := strings.Join(Conclude(r).Warnings, "\n")
	if !strings.Contains(w, "b1e1: tps rose over the repeats") || !strings.Contains(w, "p=0.003") {
		t.Errorf("warnings %q", w)
	}
}

// Observe derives the mechanism from known per-second metrics: 2 fsyncs
// per transaction at 1000 tps (one data, one binlog), 500 µs of server CPU.
func TestObserveMechanism(t *testing.T) {
	t.Parallel()
	cols := observe.Columns()
	idx := map[string]int{}
	for i, c := range cols {
		idx[c] = i
	}
	c := &record.Cell{Status: record.CellOK}
	for s := 0; s < 12; s++ {
		ph := engine.PhaseRun
		if s < 2 {
			ph = engine.PhaseWarmup
		}
		c.Intervals = append(c.Intervals, engine.Interval{Phase: ph, Start: time.Duration(s) * time.Second, End: time.Duration(s+1) * time.Second, Events: 1000})
		row := make([]float64, len(cols))
		for i := range row {
			row[i] = math.NaN()
		}
		row[idx["data_fsyncs_s"]], row[idx["binlog_fsyncs_s"]] = 1000, 1000
		row[idx["disk_writes_s"]], row[idx["disk_iops"]], row[idx["disk_write_kb_s"]], row[idx["disk_read_kb_s"]] = 2000, 2000, 8000, 0
		row[idx["disk_await_ms"]], row[idx["disk_util_pct"]], row[idx["cpu_server_pct"]] = 0.25, 60, 50
		row[idx["cpu_other_pct"]], row[idx["cpu_steal_pct"]], row[idx["disk_other_kb_s"]] = 5, 0, 10
		if s < 2 {
			row[idx["data_fsyncs_s"]] = 99999 // the warm-up is not counted
		}
		c.Metrics = append(c.Metrics, row)
	}
	analysis.Observe(c, cols)
	want := map[string]float64{"data_fsyncs_trx": 1, "binlog_fsyncs_trx": 1, "disk_writes_trx": 2, "disk_kb_trx": 8,
		"server_cpu_us_trx": 500, "disk_iops": 2000, "disk_kb_io": 4, "disk_queue": 0.5, "disk_await_ms": 0.25, "disk_util_pct": 60, "cpu_other_pct": 5}
	for k, v := range want {
		if got, ok := c.Mechanism[k]; !ok || !near(got, v, 1e-9) {
			t.Errorf("%s = %v (%v), want %v", k, got, ok, v)
		}
	}
	if _, ok := c.Mechanism["redo_fsyncs_trx"]; ok {
		t.Error("redo_fsyncs_trx without data")
	}
	if c.Contention == nil || c.Contention.Contended {
		t.Errorf("contention %+v", c.Contention)
	}
	if got := mechanismLine(c.Mechanism); got != "1.00 data fsyncs, 1.00 binlog fsyncs, 2.00 device writes, 8.0 KiB written (whole device, other processes' IO included), 500 µs server CPU per transaction; device await 0.250 ms, 60% busy" {
		t.Errorf("mechanismLine = %q", got)
	}
	_ = experiment.ExpectColumns
}

// Every column an expectation may name has a value source.
func TestExpectColumnsHaveValues(t *testing.T) {
	t.Parallel()
	// An engine's own figures (TPC-C's nopm, tpm) come from its result.
	c := &record.Cell{Status: record.CellOK, Result: &engine.Result{Elapsed: time.Second, Events: 5, Metrics: map[string]float64{"nopm": 1, "tpm": 1}}, Mechanism: map[string]float64{},
		Capacity: &record.CellCapacity{Searched: true, Search: &capacity.Outcome{Capacity: 100}, Run: &capacity.Step{Verdict: capacity.Meets}}}
	for _, k := range MechanismColumns {
		c.Mechanism[k] = 1
	}
	for _, col := range experiment.ExpectColumns {
		if math.IsNaN(record.CellValue(c, col)) {
			t.Errorf("expect column %s has no value in CellValue", col)
		}
	}
}
