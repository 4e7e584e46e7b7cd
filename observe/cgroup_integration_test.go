package observe

import (
	"math"
	"sort"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/server"
)

// A real sandbox under a 100 write IOPS cap, a half-CPU quota and 1 GiB,
// a 1-thread commit-per-insert load, and the sampler given the server's
// cgroup: the cg_* columns carry the server's own writes (at most the cap),
// its memory and its CPU throttling, and the device's queue is sampled.
func TestCgroupColumnsRealSandbox(t *testing.T) {
	ctx, sb, _ := limitedSandbox(t, catalog.LimitSet{DiskWriteIOPS: 100, CPUs: 0.5, Memory: 1 << 30},
		server.Setting{Name: "innodb_flush_log_at_trx_commit", Value: "1"})
	paths, ok := sb.Cgroup()
	if !ok || paths.Device == "" {
		t.Fatalf("a limited sandbox has no cgroup paths: %+v %v", paths, ok)
	}
	db := openPool(t, sb)
	mustExec(t, db, "CREATE DATABASE cg", "CREATE TABLE cg.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB")

	s := samplerOn(t, ctx, sb)
	end := time.Now().Add(5 * time.Second)
	n := 0
	for time.Now().Before(end) {
		if _, err := db.ExecContext(ctx, "INSERT INTO cg.t (v) VALUES (1)"); err != nil {
			s.Stop()
			t.Fatal(err)
		}
		n++
	}
	rows := Rates(s.Stop())
	for _, note := range s.Notes() {
		t.Log(note)
	}
	col := func(name string) []float64 {
		var out []float64
		for _, r := range rows {
			if v := r.Get(name); !math.IsNaN(v) {
				out = append(out, v)
			}
		}
		sort.Float64s(out)
		return out
	}
	writes := col("cg_writes_s")
	t.Logf("%d inserts in 5 s; cg_writes_s %v; disk_writes_s %v; cg_memory_mb %v; throttled periods/s %v; avgqu-sz %v; areq KiB %v",
		n, writes, col("disk_writes_s"), col("cg_memory_mb"), col("cg_cpu_throttled_periods_s"), col("disk_avgqu_sz"), col("disk_avg_req_kb"))
	if len(writes) < 3 {
		t.Fatalf("cg_writes_s has %d values in %d rows", len(writes), len(rows))
	}
	// Every commit writes the redo log: the group writes, and the cap holds
	// (a second's count may straddle a tick: allow 15%). The median, not
	// every value: the last, short interval (the sampler's stop) can catch
	// a burst the throttle lets through and read as a high rate.
	if med := writes[len(writes)/2]; med <= 0 || med > 115 {
		t.Errorf("cg_writes_s %v: want a median above 0 and at most the cap of 100 (+15%%)", writes)
	}
	if mem := col("cg_memory_mb"); len(mem) == 0 || mem[0] < 10 || mem[len(mem)-1] > 1024 {
		t.Errorf("cg_memory_mb %v: want the server's memory, under its 1 GiB limit", mem)
	}
	if len(col("cg_cpu_throttled_periods_s")) == 0 || len(col("cg_cpu_throttled_ms_s")) == 0 {
		t.Error("CPU throttling columns are empty under a CPU quota")
	}
	if len(col("disk_avgqu_sz")) == 0 || len(col("disk_avg_req_kb")) == 0 {
		t.Error("device queue columns are empty")
	}
	if v := col("cg_io_stall_pct"); len(v) != 0 && !paths.V2 {
		t.Errorf("cg_io_stall_pct on cgroup v1: %v", v)
	}
}
