package analysis

import (
	"math"

	"benchmatrix/engine"
	"benchmatrix/record"
	"benchmatrix/record/parts"
)

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

// Observe derives a finished cell's mechanism (what each transaction cost
// the server and the device over the measured window: Σ metric / Σ tps
// over the measured seconds where both have a value, so a busy second
// weighs more than an idle one), its contention and how much its limits
// bound, from its intervals and sampled metrics (columns names them). The
// runner calls it when a cell ends; it is a pure function of the cell.
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
		ct.CPUOtherPct, ct.StealPct, ct.IOOtherKBs = finiteOrZero(ct.CPUOtherPct), finiteOrZero(ct.StealPct), finiteOrZero(ct.IOOtherKBs)
		c.Contention = &ct
	}
	if len(m) > 0 {
		c.Mechanism = m
	}
	ObserveBinding(c, col)
}

// ObserveBinding records how much each of the cell's limits bound; col
// returns a column's measured seconds (NaN for none).
func ObserveBinding(c *record.Cell, col func(string) []float64) {
	if c.Limits == nil || c.Limits.Requested.Server().IsZero() {
		return
	}
	b := parts.AssessBinding(c.Limits.Requested, parts.BindingSeries{
		ThrottledPeriods: col("cg_cpu_throttled_periods_s"),
		ThrottledMs:      col("cg_cpu_throttled_ms_s"),
		Reads:            col("cg_reads_s"),
		Writes:           col("cg_writes_s"),
		ReadKB:           col("cg_read_kb_s"),
		WriteKB:          col("cg_write_kb_s"),
		MemoryMB:         col("cg_memory_mb"),
		MemoryLimitHits:  col("cg_memory_limit_hits_s"),
		ServerCPUPct:     col("cpu_server_pct"),
	})
	if len(b.Limits) > 0 {
		c.Binding = &b
	}
}
