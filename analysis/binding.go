package analysis

import (
	"benchmatrix/record"
	"benchmatrix/record/parts"
)

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
