package record

import (
	"math"
	"strconv"
	"strings"
)

// Column is one result column of cells.csv: a figure (or a text) of one
// cell run. The writer, CellValue, expectations, compare and the summary's
// mechanism table all read Columns, so a new column is one entry there.
type Column struct {
	Name string // cells.csv header
	Unit string // "tps", "ms", "count", "s", "" for a text
	// Value is the cell run's figure; ok is false when it has none (an
	// empty field in cells.csv, NaN for CellValue). Nil for a text column.
	Value func(c *Cell) (v float64, ok bool)
	// Format prints Value in cells.csv; nil prints it rounded to three
	// decimals with no trailing zeros.
	Format func(v float64) string
	// Text is a text column's field (Value nil).
	Text func(c *Cell) string
	// Result marks a figure of the engine's result: written only for a
	// successful cell run.
	Result bool
	// Expect: an [experiment] expect may compare it (experiment.ExpectColumns
	// are the columns marked so).
	Expect bool
	// Compare is the column's name in `compare`'s table ("" when compare
	// leaves it out); HigherIsBetter says which way is an improvement.
	Compare        string
	HigherIsBetter bool
	// Mechanism marks a figure of Cell.Mechanism (what each transaction
	// cost); Heading and Figure are its heading and fmt verb in summary.md's
	// mechanism table.
	Mechanism bool
	Heading   string
	Figure    string
}

// Columns are cells.csv's result columns, in file order: after cell,
// scenario, one column per varying parameter, repeat and status. New
// columns go at the end, so that the positions of the others hold.
var Columns = append([]Column{
	{Name: "tps", Unit: "tps", Result: true, Expect: true, Compare: "tps", HigherIsBetter: true, Format: fixed(2),
		Value: result(func(c *Cell) float64 { return c.Result.TPS() })},
	{Name: "qps", Unit: "qps", Result: true, Expect: true, Format: fixed(2),
		Value: result(func(c *Cell) float64 { return c.Result.QPS() })},
	{Name: "lat_avg_ms", Unit: "ms", Result: true, Expect: true, Format: fixed(3),
		Value: result(func(c *Cell) float64 { return c.Result.Latency.Avg })},
	{Name: "lat_p95_ms", Unit: "ms", Result: true, Expect: true, Compare: "p95", Format: fixed(3),
		Value: result(func(c *Cell) float64 { return c.Result.Latency.P95 })},
	{Name: "lat_p99_ms", Unit: "ms", Result: true, Expect: true, Compare: "p99", Format: fixed(3),
		Value: result(func(c *Cell) float64 { return c.Result.Latency.P99 })},
	{Name: "lat_max_ms", Unit: "ms", Result: true, Expect: true, Format: fixed(3),
		Value: result(func(c *Cell) float64 { return c.Result.Latency.Max })},
	{Name: "errors", Unit: "count", Result: true, Format: integer,
		Value: result(func(c *Cell) float64 { return float64(c.Result.Errors) })},
	{Name: "reconnects", Unit: "count", Result: true, Format: integer,
		Value: result(func(c *Cell) float64 { return float64(c.Result.Reconnects) })},
	{Name: "events", Unit: "count", Result: true, Format: integer,
		Value: result(func(c *Cell) float64 { return float64(c.Result.Events) })},
	{Name: "seconds", Unit: "s", Result: true, Format: fixed(3),
		Value: result(func(c *Cell) float64 { return c.Result.Elapsed.Seconds() })},
	{Name: "rows_delta", Unit: "rows", Format: integer, Value: func(c *Cell) (float64, bool) {
		if c.Growth == nil {
			return 0, false
		}
		return float64(c.Growth.RowsDelta), true
	}},
	{Name: "stall_count", Unit: "count", Format: integer, Value: func(c *Cell) (float64, bool) {
		if c.Stalls == nil {
			return 0, false
		}
		return float64(c.Stalls.Count), true
	}},
	{Name: "stall_seconds", Unit: "s", Format: fixed(2), Value: func(c *Cell) (float64, bool) {
		if c.Stalls == nil {
			return 0, false
		}
		return c.Stalls.TotalSeconds, true
	}},
	{Name: "stall_period_s", Unit: "s", Format: fixed(2), Value: func(c *Cell) (float64, bool) {
		if c.Stalls == nil || c.Stalls.PeriodSeconds <= 0 {
			return 0, false
		}
		return c.Stalls.PeriodSeconds, true
	}},
	// One line per row, so that a resumed run can check rows line by line.
	{Name: "error", Text: func(c *Cell) string { return strings.Join(strings.Fields(c.Error), " ") }},

	// The mechanism (results/mechanism.go computes Cell.Mechanism).
	mechanism("data_fsyncs_trx", "fsyncs", "data fsync/trx", "%.2f", true),                // Innodb_data_fsyncs per transaction (MariaDB: the redo log's included)
	mechanism("redo_fsyncs_trx", "fsyncs", "redo fsync/trx", "%.2f", true),                // Innodb_os_log_fsyncs per transaction (MySQL only)
	mechanism("binlog_fsyncs_trx", "fsyncs", "binlog fsync/trx", "%.2f", true),            // binary log fsyncs per transaction
	mechanism("disk_writes_trx", "writes", "dev writes/trx (whole device)", "%.2f", true), // device writes completed per transaction
	mechanism("disk_kb_trx", "KiB", "dev KiB written/trx (whole device)", "%.1f", true),   // KiB written to the device per transaction
	mechanism("disk_flushes_trx", "flushes", "dev flushes/trx", "%.2f", true),             // device cache flushes per transaction
	mechanism("server_cpu_us_trx", "µs", "server CPU µs/trx", "%.0f", true),               // server CPU (user + system) per transaction
	mechanism("disk_iops", "IOPS", "IOPS", "%.0f", false),                                 // device reads + writes per second (mean)
	mechanism("disk_kb_io", "KiB", "KiB/IO", "%.1f", false),                               // KiB per IO (read + written over reads + writes)
	mechanism("disk_queue", "IOs", "queue", "%.2f", false),                                // mean IOs in flight: IOPS × await (Little's law, like sar's aqu-sz)
	mechanism("disk_await_ms", "ms", "await ms", "%.3f", false),                           // mean time per IO, queueing included (IO-weighted)
	mechanism("disk_util_pct", "%", "util %", "%.0f", false),                              // share of time the device was busy (mean)
	mechanism("cpu_other_pct", "%", "other CPU %", "%.0f", false),                         // CPU used by other processes, % of one CPU (median)

	{Name: "contended", Text: func(c *Cell) string {
		switch {
		case c.Contention == nil:
			return ""
		case c.Contention.Contended:
			return "yes"
		}
		return "no"
	}},
	// The limits in force that did not bind in the measured window
	// (parts.AssessBinding), space-separated; empty without limits.
	{Name: "limits_unbound", Text: func(c *Cell) string { return strings.Join(c.Binding.Unbound(), " ") }},
	// The server's own IO per transaction, from its cgroup (v1
	// blkio.throttle.io_serviced/io_service_bytes, v2 io.stat) on the
	// datadir's device; empty when the server has no cgroup of its own.
	mechanism("cg_writes_trx", "writes", "server writes/trx", "%.2f", false),
	mechanism("cg_reads_trx", "reads", "server reads/trx", "%.2f", false),
	mechanism("cg_kb_trx", "KiB", "server KiB written/trx", "%.1f", false),
	// The time to a steady state from the engine's first second (warm-up
	// included; analysis/steady.go): empty when the cell did not settle
	// within its run.
	{Name: "steady_s", Unit: "s", Format: fixed(0), Value: func(c *Cell) (float64, bool) {
		if c.Steady == nil || !c.Steady.Settled {
			return 0, false
		}
		return c.Steady.Seconds, true
	}},
	// An engine's own figures of the window (engine.Result.Metrics): TPC-C's
	// NOPM and TPM (docs/tpcc.md); empty for the engines without them.
	{Name: "nopm", Unit: "nopm", Result: true, Expect: true, Format: fixed(1), Value: engineMetric("nopm")},
	{Name: "tpm", Unit: "tpm", Result: true, Expect: true, Format: fixed(1), Value: engineMetric("tpm")},
	// The capacity at the cell's latency target (capacity.go): the highest
	// open-loop rate found to meet it, and the target, state and bracket.
	{Name: "capacity", Unit: "tps", Expect: true, Compare: "capacity", HigherIsBetter: true, Format: fixed(1),
		Value: func(c *Cell) (float64, bool) { return c.Capacity.Value() }},
	{Name: "capacity_slo", Text: func(c *Cell) string { return c.Capacity.Text() }},
}, tpccTypeColumns()...)

// TPCCTypes are TPC-C's five transaction types as its figures name them
// (tpcc.Types, which record does not import: tpcc's test holds the two
// together).
var TPCCTypes = []string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// tpccTypeColumns are the per-type figures of a TPC-C cell's window (issue
// 29), after every other column: for each type its committed transactions
// per minute and the average, p95 and p99 latency of the committed ones in
// ms, as in summary.md's per-type table and run.json's result metrics;
// empty for the other engines.
func tpccTypeColumns() []Column {
	var out []Column
	for _, t := range TPCCTypes {
		out = append(out,
			Column{Name: t + "_per_min", Unit: "tpm", Result: true, Format: fixed(1), Value: engineMetric(t + "_per_min")},
			Column{Name: t + "_avg_ms", Unit: "ms", Result: true, Format: fixed(3), Value: engineMetric(t + "_avg_ms")},
			Column{Name: t + "_p95_ms", Unit: "ms", Result: true, Format: fixed(3), Value: engineMetric(t + "_p95_ms")},
			Column{Name: t + "_p99_ms", Unit: "ms", Result: true, Format: fixed(3), Value: engineMetric(t + "_p99_ms")},
		)
	}
	return out
}

func engineMetric(name string) func(*Cell) (float64, bool) {
	return func(c *Cell) (float64, bool) {
		if c.Result == nil {
			return 0, false
		}
		v, ok := c.Result.Metrics[name]
		return v, ok
	}
}

// ColumnNamed returns the column of that cells.csv name.
func ColumnNamed(name string) (Column, bool) {
	for _, c := range Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// ColumnNames are the names of the columns for which keep is true (all
// for nil), in Columns' order.
func ColumnNames(keep func(Column) bool) []string {
	var out []string
	for _, c := range Columns {
		if keep == nil || keep(c) {
			out = append(out, c.Name)
		}
	}
	return out
}

// Field is the column's cells.csv field for c: "" for no value, and for a
// value that cannot be written (NaN, ±Inf).
func (col Column) Field(c *Cell) string {
	if col.Text != nil {
		return col.Text(c)
	}
	if col.Result && (c.Status != CellOK || c.Result == nil) {
		return ""
	}
	v, ok := col.Value(c)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	if col.Format != nil {
		return col.Format(v)
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

// CellValue is one figure of a successful cell run by its column name; NaN
// when there is none (a failed run, an unknown or a text column).
func CellValue(c *Cell, name string) float64 {
	if c.Status != CellOK || c.Result == nil {
		return math.NaN()
	}
	col, ok := ColumnNamed(name)
	if !ok || col.Value == nil {
		return math.NaN()
	}
	if v, ok := col.Value(c); ok {
		return v
	}
	return math.NaN()
}

func result(f func(c *Cell) float64) func(*Cell) (float64, bool) {
	return func(c *Cell) (float64, bool) {
		if c.Result == nil {
			return 0, false
		}
		return f(c), true
	}
}

func mechanism(name, unit, heading, figure string, expect bool) Column {
	return Column{Name: name, Unit: unit, Mechanism: true, Heading: heading, Figure: figure, Expect: expect,
		Value: func(c *Cell) (float64, bool) {
			v, ok := c.Mechanism[name]
			return v, ok
		}}
}

func fixed(digits int) func(float64) string {
	return func(v float64) string { return strconv.FormatFloat(v, 'f', digits, 64) }
}

func integer(v float64) string { return strconv.FormatInt(int64(v), 10) }
