package results

import (
	"fmt"
	"io"
	"strings"

	"benchmatrix/analysis"
	"benchmatrix/record"
	"benchmatrix/record/parts"
	"benchmatrix/section"
)

// The mechanism of a cell (analysis.Observe derives it from the sampled
// metrics) in summary.md and the Conclusion.

// MechanismColumns are the names of those figures: record.Columns' entries
// marked Mechanism, in its order.
var MechanismColumns = record.ColumnNames(func(c record.Column) bool { return c.Mechanism })

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

// MechanismRows is the mechanism table: per cell, the medians over its
// repeats of every figure some cell has, and the contention flag.
func MechanismRows(r *record.Run) ([]string, [][]string) {
	med, cont := analysis.MechanismMedians(r)
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
