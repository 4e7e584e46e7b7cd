package results

import (
	"fmt"
	"io"
	"math"
	"strings"

	"benchmatrix/analysis"
	"benchmatrix/engine"
	"benchmatrix/record"
	"benchmatrix/record/parts"
	"benchmatrix/section"
)

// The mechanism of a cell: what each transaction cost the server and the
// device over the measured window, from the sampled metrics. Per-transaction
// figures are Σ metric / Σ tps over the measured seconds where both have a
// value (so a busy second weighs more than an idle one).
// MechanismColumns are the names of those figures: record.Columns' entries
// marked Mechanism, in its order.
var MechanismColumns = record.ColumnNames(func(c record.Column) bool { return c.Mechanism })

// perTrx maps a per-transaction figure to the per-second column it sums
// and a scale.
var perTrx = map[string]struct {
	col   string
	scale float64
}{
	"data_fsyncs_trx":   {"data_fsyncs_s", 1},
	"redo_fsyncs_trx":   {"redo_fsyncs_s", 1},
	"binlog_fsyncs_trx": {"binlog_fsyncs_s", 1},
	"disk_writes_trx":   {"disk_writes_s", 1},
	"disk_kb_trx":       {"disk_write_kb_s", 1},
	"disk_flushes_trx":  {"disk_flushes_s", 1},
	"server_cpu_us_trx": {"cpu_server_pct", 1e6 / 100},
	// The server's own IO, from its cgroup (a sandbox under limits, a
	// container): beside the whole device's, which other processes share.
	"cg_writes_trx": {"cg_writes_s", 1},
	"cg_reads_trx":  {"cg_reads_s", 1},
	"cg_kb_trx":     {"cg_write_kb_s", 1},
}

// Observe derives a finished cell's mechanism and contention from its
// intervals and sampled metrics (columns names them). The runner calls it
// when a cell ends; it is a pure function of the cell.
func Observe(c *record.Cell, columns []string) {
	if len(c.Metrics) == 0 {
		return
	}
	idx := map[string]int{}
	for i, n := range columns {
		idx[n] = i
	}
	var tps []float64
	var rows [][]float64
	for i, iv := range c.Intervals {
		if iv.Phase != engine.PhaseRun || i >= len(c.Metrics) {
			continue
		}
		s := iv.Seconds()
		if s <= 0 {
			continue
		}
		tps = append(tps, float64(iv.Events)/s)
		rows = append(rows, c.Metrics[i])
	}
	col := func(name string) []float64 {
		out := make([]float64, len(rows))
		j, ok := idx[name]
		for i, r := range rows {
			out[i] = math.NaN()
			if ok && j < len(r) {
				out[i] = r[j]
			}
		}
		return out
	}
	m := map[string]float64{}
	set := func(k string, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			m[k] = v
		}
	}
	for k, p := range perTrx {
		xs := col(p.col)
		num, den := 0.0, 0.0
		for i, x := range xs {
			if !math.IsNaN(x) && tps[i] >= 0 {
				num += x * p.scale
				den += tps[i]
			}
		}
		if den > 0 {
			set(k, num/den)
		}
	}
	iops, await, util := col("disk_iops"), col("disk_await_ms"), col("disk_util_pct")
	rkb, wkb := col("disk_read_kb_s"), col("disk_write_kb_s")
	var sIOPS, sKB, sWait, sQ, sUtil float64
	var nIOPS, nUtil int
	for i := range rows {
		if !math.IsNaN(iops[i]) {
			sIOPS += iops[i]
			nIOPS++
			if !math.IsNaN(rkb[i]) && !math.IsNaN(wkb[i]) {
				sKB += rkb[i] + wkb[i]
			}
			if !math.IsNaN(await[i]) {
				sWait += iops[i] * await[i]
				sQ += iops[i] * await[i] / 1000
			}
		}
		if !math.IsNaN(util[i]) {
			sUtil += util[i]
			nUtil++
		}
	}
	if nIOPS > 0 {
		set("disk_iops", sIOPS/float64(nIOPS))
		set("disk_queue", sQ/float64(nIOPS))
		if sIOPS > 0 {
			set("disk_kb_io", sKB/sIOPS)
			set("disk_await_ms", sWait/sIOPS)
		} else {
			set("disk_await_ms", 0)
		}
	}
	if nUtil > 0 {
		set("disk_util_pct", sUtil/float64(nUtil))
	}
	ioAll := make([]float64, len(rows))
	for i := range rows {
		ioAll[i] = rkb[i] + wkb[i]
	}
	ct := parts.AssessContention(col("cpu_other_pct"), col("cpu_steal_pct"), col("disk_other_kb_s"), ioAll, parts.ContentionThresholds{})
	if ct.Intervals > 0 {
		if !math.IsNaN(ct.CPUOtherPct) {
			set("cpu_other_pct", ct.CPUOtherPct)
		}
		ct.CPUOtherPct, ct.StealPct, ct.IOOtherKBs = finiteOr0(ct.CPUOtherPct), finiteOr0(ct.StealPct), finiteOr0(ct.IOOtherKBs)
		c.Contention = &ct
	}
	if len(m) > 0 {
		c.Mechanism = m
	}
	analysis.ObserveBinding(c, col) // analysis/binding.go
}

func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// CellValue is one figure of a successful cell run by its cells.csv or
// expectation column name; NaN when there is none (record.CellValue).
func CellValue(c *record.Cell, column string) float64 { return record.CellValue(c, column) }

// mechanismFormat is the fmt verb that prints a mechanism figure in
// summary.md, and mechanismHeader its table heading (record.Columns).
func mechanismFormat(k string) string {
	col, _ := record.ColumnNamed(k)
	return col.Figure
}

func mechanismHeader(k string) string {
	col, _ := record.ColumnNamed(k)
	return col.Heading
}

// mechanismMedians is, per cell name, the median of each mechanism figure
// over the successful repeats, and how many repeats were contended.
func mechanismMedians(r *record.Run) (map[string]map[string]float64, map[string][2]int) {
	vals := map[string]map[string][]float64{}
	cont := map[string][2]int{}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Status != record.CellOK {
			continue
		}
		if vals[c.Name] == nil {
			vals[c.Name] = map[string][]float64{}
		}
		for k, v := range c.Mechanism {
			vals[c.Name][k] = append(vals[c.Name][k], v)
		}
		n := cont[c.Name]
		if c.Contention != nil {
			n[1]++
			if c.Contention.Contended {
				n[0]++
			}
		}
		cont[c.Name] = n
	}
	out := map[string]map[string]float64{}
	for name, byCol := range vals {
		out[name] = map[string]float64{}
		for k, xs := range byCol {
			out[name][k] = record.Median(xs)
		}
	}
	return out, cont
}

// MechanismRows is the mechanism table: per cell, the medians over its
// repeats of every figure some cell has, and the contention flag.
func MechanismRows(r *record.Run) ([]string, [][]string) {
	med, cont := mechanismMedians(r)
	var cols []string
	for _, k := range MechanismColumns {
		for _, m := range med {
			if _, ok := m[k]; ok {
				cols = append(cols, k)
				break
			}
		}
	}
	if len(cols) == 0 {
		return nil, nil
	}
	header := []string{"cell"}
	for _, k := range cols {
		header = append(header, mechanismHeader(k))
	}
	header = append(header, "contended")
	var rows [][]string
	for _, s := range r.Summaries() {
		row := []string{s.Name}
		for _, k := range cols {
			v, ok := med[s.Name][k]
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, fmt.Sprintf(mechanismFormat(k), v))
		}
		c := cont[s.Name]
		switch {
		case c[1] == 0:
			row = append(row, "-")
		case c[0] == 0:
			row = append(row, "no")
		default:
			row = append(row, fmt.Sprintf("**yes** (%d of %d)", c[0], c[1]))
		}
		rows = append(rows, row)
	}
	return header, rows
}

// mechanismLine is the Conclusion's one line for a cell: its fsyncs, its
// own writes (from its cgroup, when it has one), the whole device's writes
// (labelled: other processes' IO included) and CPU per transaction.
func mechanismLine(m map[string]float64) string {
	var parts []string
	add := func(k, unit string) {
		if v, ok := m[k]; ok {
			parts = append(parts, fmt.Sprintf(mechanismFormat(k)+" %s", v, unit))
		}
	}
	add("data_fsyncs_trx", "data fsyncs")
	add("redo_fsyncs_trx", "redo fsyncs")
	add("binlog_fsyncs_trx", "binlog fsyncs")
	_, own := m["cg_writes_trx"]
	if own {
		add("cg_writes_trx", "server writes")
		add("cg_kb_trx", "KiB written by the server")
		add("cg_reads_trx", "server reads")
	}
	var dev []string
	if v, ok := m["disk_writes_trx"]; ok {
		dev = append(dev, fmt.Sprintf(mechanismFormat("disk_writes_trx")+" device writes", v))
	}
	if v, ok := m["disk_kb_trx"]; ok {
		dev = append(dev, fmt.Sprintf(mechanismFormat("disk_kb_trx")+" KiB written", v))
	}
	if len(dev) > 0 {
		who := "whole device, other processes' IO included"
		if own {
			who = "whole device"
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", strings.Join(dev, ", "), who))
	}
	add("server_cpu_us_trx", "µs server CPU")
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, ", ") + " per transaction"
	if v, ok := m["disk_await_ms"]; ok {
		s += fmt.Sprintf("; device await %.3f ms", v)
		if u, ok := m["disk_util_pct"]; ok {
			s += fmt.Sprintf(", %.0f%% busy", u)
		}
	}
	return s
}

// waitText is "wait/io/file/sql/binlog 1.234 s (4100, avg 301 µs, max
// 11.3 ms)"; a maximum that did not rise during the cell is the server's
// since its start, written "max ≤ ...".
func waitText(e parts.WaitEvent) string {
	s := fmt.Sprintf("%s %.3f s (%d", e.Event, e.Seconds, e.Count)
	if e.Count > 0 {
		s += ", avg " + durText(e.Seconds/float64(e.Count))
	}
	if e.MaxSeconds > 0 {
		if e.MaxInCell {
			s += ", max " + durText(e.MaxSeconds)
		} else {
			s += ", max ≤ " + durText(e.MaxSeconds)
		}
	}
	return s + ")"
}

// durText prints seconds as µs, ms or s.
func durText(sec float64) string {
	switch {
	case sec < 1e-3:
		return fmt.Sprintf("%.1f µs", sec*1e6)
	case sec < 1:
		return fmt.Sprintf("%.2f ms", sec*1e3)
	}
	return fmt.Sprintf("%.2f s", sec)
}

// writeMechanism is summary.md's table of what each transaction cost.
func writeMechanism(w io.Writer, r *record.Run) error {
	header, rows := MechanismRows(r)
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n### Mechanism: per transaction and on the device\n\n")
	if err := section.MarkdownTable(w, header, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nmedians over the repeats of the measured window: fsyncs, device writes, KiB written, device flushes and server CPU per transaction "+
		"(the device's figures count the whole device, other processes' IO included; the server's writes, reads and KiB come from its own cgroup, when it has one: a sandbox under limits, a container) "+
		"(Σ per-second figure / Σ tps); IOPS, KiB per IO, queue (IOPS × await, Little's law), await (IO-weighted) and util on the datadir's device; "+
		"other CPU is the host CPU used by neither the server nor benchmatrix, in %% of one CPU. "+
		"A cell is contended when other processes used over 25%% of a CPU, the hypervisor stole over 10%%, or other IO exceeded 1 MiB/s and half the device's traffic, in over a fifth of its seconds.\n")
	return nil
}
