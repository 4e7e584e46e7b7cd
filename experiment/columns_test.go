package experiment

import (
	"slices"
	"testing"
)

// An expectation may compare exactly these columns, in cells.csv's order
// (record.Columns marks them Expect).
func TestExpectColumnsAreTheTables(t *testing.T) {
	want := []string{"tps", "qps", "lat_avg_ms", "lat_p95_ms", "lat_p99_ms", "lat_max_ms",
		"data_fsyncs_trx", "redo_fsyncs_trx", "binlog_fsyncs_trx", "disk_writes_trx", "disk_kb_trx", "disk_flushes_trx",
		"server_cpu_us_trx", "nopm", "tpm", "capacity"}
	if !slices.Equal(ExpectColumns, want) {
		t.Errorf("columns marked Expect %v, want %v", ExpectColumns, want)
	}
}
