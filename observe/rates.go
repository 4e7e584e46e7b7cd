package observe

import (
	"math"
	"time"
)

// Row is one interval between two consecutive samples: counters as
// per-second rates over the interval, gauges as read at its end.
type Row struct {
	// T is the end of the interval (the later sample's time since Start);
	// Dt its length. With a 1 s interval, the row with T = 3 s covers the
	// third second, like the workload's interval line t=3.
	T, Dt time.Duration
	// Values is aligned with Columns(); NaN means no value (a failed read
	// on either side, a server restart inside the interval, a metric the
	// flavor does not have). Writers print NaN as an empty cell.
	Values []float64
}

// Get returns the value of the named column, NaN when unknown.
func (r Row) Get(name string) float64 {
	if i, ok := columnIndex[name]; ok && i < len(r.Values) {
		return r.Values[i]
	}
	return math.NaN()
}

// ColumnDoc describes one column of Rates' rows.
type ColumnDoc struct {
	Name string
	// Kind is "rate" (a counter's per-second delta), "gauge" (the value
	// at the interval's end) or "interval" (a ratio of deltas over the
	// interval: a mean time, a share of time).
	Kind    string
	Meaning string // what it is and where it comes from on each flavor
}

type column struct {
	ColumnDoc
	sql bool // read from the server: reset across a server restart
	// value computes the column for the interval prev→cur (dt seconds);
	// it returns NaN when it cannot.
	value func(prev, cur map[string]float64, dt float64) float64
}

var nan = math.NaN()

// rate of the first counter present in both samples.
func rate(keys ...string) func(prev, cur map[string]float64, dt float64) float64 {
	return func(prev, cur map[string]float64, dt float64) float64 {
		for _, k := range keys {
			if d, ok := delta(prev, cur, k); ok {
				return d / dt
			}
		}
		return nan
	}
}

// scaled rate: rate × factor.
func scaledRate(factor float64, keys ...string) func(prev, cur map[string]float64, dt float64) float64 {
	r := rate(keys...)
	return func(prev, cur map[string]float64, dt float64) float64 { return r(prev, cur, dt) * factor }
}

// gauge: the first key present at the end of the interval.
func gauge(keys ...string) func(prev, cur map[string]float64, dt float64) float64 {
	return func(_, cur map[string]float64, _ float64) float64 {
		for _, k := range keys {
			if v, ok := cur[k]; ok {
				return v
			}
		}
		return nan
	}
}

// delta of a cumulative counter; a decrease (reset) gives no value.
func delta(prev, cur map[string]float64, k string) (float64, bool) {
	a, ok1 := prev[k]
	b, ok2 := cur[k]
	if !ok1 || !ok2 || b < a {
		return 0, false
	}
	return b - a, true
}

// sumDelta of several counters, all required.
func sumDelta(prev, cur map[string]float64, keys ...string) (float64, bool) {
	s := 0.0
	for _, k := range keys {
		d, ok := delta(prev, cur, k)
		if !ok {
			return 0, false
		}
		s += d
	}
	return s, true
}

// cpuShare: Δkey / Δtotal of /proc/stat, in %.
func cpuShare(key string) func(prev, cur map[string]float64, dt float64) float64 {
	return func(prev, cur map[string]float64, _ float64) float64 {
		d, ok1 := delta(prev, cur, key)
		t, ok2 := delta(prev, cur, "os.cpu.total")
		if !ok1 || !ok2 || t == 0 {
			return nan
		}
		return 100 * d / t
	}
}

var columns = append([]column{
	{ColumnDoc{"handler_commits_s", "rate", "Handler_commit: storage-engine (internal) commits per second, autocommit statements included. With the binlog on, MariaDB counts about 2 per transaction (two-phase commit: measured 2× the INSERT rate)"}, true,
		rate("handler_commit")},
	{ColumnDoc{"com_commit_s", "rate", "Com_commit: explicit COMMIT statements per second; 0 under autocommit. MariaDB: information_schema.GLOBAL_STATUS; MySQL: SHOW GLOBAL STATUS LIKE 'Com_commit' (not in P_S global_status)"}, true,
		rate("com_commit")},
	{ColumnDoc{"data_fsyncs_s", "rate", "Innodb_data_fsyncs: InnoDB fsync() calls per second; on MariaDB this includes the redo log's"}, true,
		rate("innodb_data_fsyncs")},
	{ColumnDoc{"redo_fsyncs_s", "rate", "Innodb_os_log_fsyncs: redo log fsyncs per second. MySQL only; MariaDB 10.11 does not count them apart, so the column is empty there"}, true,
		rate("innodb_os_log_fsyncs")},
	{ColumnDoc{"binlog_fsyncs_s", "rate", "binary log fsyncs per second. MariaDB: Binlog_group_commits / sync_binlog (exact for sync_binlog=1, an estimate for N>1, 0 when sync_binlog=0 or log_bin=OFF). MySQL: performance_schema.file_summary_by_event_name 'wait/io/file/sql/binlog' COUNT_MISC (empty when performance_schema=OFF)"}, true,
		binlogFsyncs},
	{ColumnDoc{"redo_kb_s", "rate", "Innodb_os_log_written: redo written per second, KiB/s"}, true,
		scaledRate(1.0/1024, "innodb_os_log_written")},
	{ColumnDoc{"dirty_pages", "gauge", "Innodb_buffer_pool_pages_dirty: modified buffer-pool pages not yet flushed"}, true,
		gauge("innodb_buffer_pool_pages_dirty")},
	{ColumnDoc{"pages_flushed_s", "rate", "Innodb_buffer_pool_pages_flushed: buffer-pool pages written per second"}, true,
		rate("innodb_buffer_pool_pages_flushed")},
	{ColumnDoc{"checkpoint_age_kb", "gauge", "redo not yet checkpointed, KiB. MariaDB: Innodb_checkpoint_age. MySQL 8.0.30+: Innodb_redo_log_current_lsn − Innodb_redo_log_checkpoint_lsn; older MySQL: INNODB_METRICS log_lsn_checkpoint_age if enabled (SET GLOBAL innodb_monitor_enable='log_lsn%'), else empty"}, true,
		checkpointAge},
	{ColumnDoc{"history_list_len", "gauge", "purge lag (undo log history length). MariaDB: Innodb_history_list_length; MySQL: INNODB_METRICS trx_rseg_history_len"}, true,
		gauge("innodb_history_list_length", "metric.trx_rseg_history_len")},
	{ColumnDoc{"threads_running", "gauge", "Threads_running: sessions executing a statement, the sampler's own included (so ≥ 1)"}, true,
		gauge("threads_running")},
	{ColumnDoc{"row_lock_waits_s", "rate", "Innodb_row_lock_waits: row lock waits begun per second"}, true,
		rate("innodb_row_lock_waits")},
	{ColumnDoc{"row_lock_current_waits", "gauge", "Innodb_row_lock_current_waits: row lock waits in progress"}, true,
		gauge("innodb_row_lock_current_waits")},
	{ColumnDoc{"bp_disk_reads_s", "rate", "Innodb_buffer_pool_reads: buffer-pool misses that read a page from disk, per second"}, true,
		rate("innodb_buffer_pool_reads")},
	{ColumnDoc{"bp_wait_free_s", "rate", "Innodb_buffer_pool_wait_free: waits for a free page per second (flushing cannot keep up)"}, true,
		rate("innodb_buffer_pool_wait_free")},
	{ColumnDoc{"table_max_id", "gauge", "the workload tables' largest id (SELECT MAX(id), read from the primary key's end each second): how fast ids are used up, which a re-insert with a new AUTO_INCREMENT id grows without bound (tables.go)"}, true,
		gauge("table.max_id")},
	{ColumnDoc{"table_rows_est", "gauge", "the workload tables' row estimate (information_schema.TABLES.TABLE_ROWS summed: InnoDB's sampled statistic, refreshed after about 10 % of the rows change; MySQL caches it for information_schema_stats_expiry) (tables.go)"}, true,
		gauge("table.rows_est")},
	{ColumnDoc{"disk_iops", "rate", "/proc/diskstats line of the device under the datadir: reads + writes completed per second (sar -d tps, without discards)"}, false,
		func(p, c map[string]float64, dt float64) float64 {
			if d, ok := sumDelta(p, c, "os.disk.reads", "os.disk.writes"); ok {
				return d / dt
			}
			return nan
		}},
	{ColumnDoc{"disk_read_kb_s", "rate", "/proc/diskstats: KiB read per second (sectors × 512)"}, false,
		scaledRate(512.0/1024, "os.disk.read_sectors")},
	{ColumnDoc{"disk_write_kb_s", "rate", "/proc/diskstats: KiB written per second (sectors × 512)"}, false,
		scaledRate(512.0/1024, "os.disk.write_sectors")},
	{ColumnDoc{"disk_flushes_s", "rate", "/proc/diskstats: cache-flush requests completed per second (what fsync sends to the device); kernel ≥ 5.5, else empty"}, false,
		rate("os.disk.flushes")},
	{ColumnDoc{"disk_await_ms", "interval", "/proc/diskstats: mean time per read or write completed in the interval, queueing included, ms (sar -d await); 0 when no I/O"}, false,
		diskAwait},
	{ColumnDoc{"disk_util_pct", "interval", "/proc/diskstats: share of the interval the device had I/O in flight, % (sar -d %util)"}, false,
		func(p, c map[string]float64, dt float64) float64 {
			d, ok := delta(p, c, "os.disk.io_ms")
			if !ok {
				return nan
			}
			return math.Min(100, d/(dt*1000)*100)
		}},
	{ColumnDoc{"cpu_server_pct", "interval", "/proc/PID/stat utime+stime of the server process, % of one CPU (can exceed 100); empty when the PID is unknown or changed"}, false,
		processCPU("os.server.ticks")},
	{ColumnDoc{"cpu_client_pct", "interval", "/proc/self/stat utime+stime of benchmatrix itself (load generator and sampler), % of one CPU"}, false,
		processCPU("os.client.ticks")},
	{ColumnDoc{"run_delay_server_pct", "interval", "/proc/PID/task/*/schedstat: time the server's threads were ready to run but waited for a CPU, % of one CPU (rundelay.go); high when the host takes the CPUs, not when the server waits on a lock or the disk"}, false,
		runDelayPct("os.server.run_delay_ns")},
	{ColumnDoc{"run_delay_client_pct", "interval", "/proc/self/task/*/schedstat: the same for benchmatrix's own threads (the load generator)"}, false,
		runDelayPct("os.client.run_delay_ns")},
	{ColumnDoc{"cpu_user_pct", "interval", "/proc/stat host CPU in user mode (user + nice), % of all CPUs"}, false,
		cpuShare("os.cpu.user")},
	{ColumnDoc{"cpu_system_pct", "interval", "/proc/stat host CPU in the kernel (system + irq + softirq), % of all CPUs"}, false,
		cpuShare("os.cpu.system")},
	{ColumnDoc{"cpu_iowait_pct", "interval", "/proc/stat host CPU idle with I/O outstanding, % of all CPUs"}, false,
		cpuShare("os.cpu.iowait")},
	{ColumnDoc{"cpu_steal_pct", "interval", "/proc/stat host CPU stolen by the hypervisor, % of all CPUs (a noisy neighbour)"}, false,
		cpuShare("os.cpu.steal")},
}, append(contentionColumns, cgroupColumns...)...)

var columnIndex = func() map[string]int {
	m := make(map[string]int, len(columns))
	for i, c := range columns {
		m[c.Name] = i
	}
	return m
}()

// Columns returns the ordered metric column names of Rates' rows. The
// order is stable: they become intervals.csv columns after the workload's.
func Columns() []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = c.Name
	}
	return out
}

// ColumnDocs describes every column, in Columns() order.
func ColumnDocs() []ColumnDoc {
	out := make([]ColumnDoc, len(columns))
	for i, c := range columns {
		out[i] = c.ColumnDoc
	}
	return out
}

func binlogFsyncs(prev, cur map[string]float64, dt float64) float64 {
	if d, ok := delta(prev, cur, "ps.binlog_count_misc"); ok {
		return d / dt
	}
	d, ok := delta(prev, cur, "binlog_group_commits")
	if !ok {
		return nan
	}
	if logBin, ok := cur["var.log_bin"]; ok && logBin == 0 {
		return 0
	}
	sync, ok := cur["var.sync_binlog"]
	if !ok {
		return nan
	}
	if sync <= 0 {
		return 0 // the server never fsyncs the binlog; the OS flushes it
	}
	return d / sync / dt
}

func checkpointAge(_, cur map[string]float64, _ float64) float64 {
	if v, ok := cur["innodb_checkpoint_age"]; ok {
		return v / 1024
	}
	a, ok1 := cur["innodb_redo_log_current_lsn"]
	b, ok2 := cur["innodb_redo_log_checkpoint_lsn"]
	if ok1 && ok2 {
		return (a - b) / 1024
	}
	if v, ok := cur["metric.log_lsn_checkpoint_age"]; ok {
		return v / 1024
	}
	return nan
}

func diskAwait(prev, cur map[string]float64, _ float64) float64 {
	ios, ok1 := sumDelta(prev, cur, "os.disk.reads", "os.disk.writes")
	ms, ok2 := sumDelta(prev, cur, "os.disk.read_ms", "os.disk.write_ms")
	if !ok1 || !ok2 {
		return nan
	}
	if ios == 0 {
		return 0
	}
	return ms / ios
}

// processCPU is Δ(utime+stime) of a process in % of one CPU. For the
// server, a changed PID (restart) gives no value.
func processCPU(key string) func(prev, cur map[string]float64, dt float64) float64 {
	return func(prev, cur map[string]float64, dt float64) float64 {
		if prev["os.server.pid"] != cur["os.server.pid"] && key == "os.server.ticks" {
			return nan
		}
		d, ok := delta(prev, cur, key)
		if !ok {
			return nan
		}
		return 100 * d / userHZ / dt
	}
}

// Rates turns samples into per-interval rows, one per pair of consecutive
// samples (so len(samples)-1 rows). Counters become per-second deltas and
// gauges the value at the interval's end. When the server restarted inside
// an interval (Uptime went down), every server column of that interval is
// empty, and deltas start again from the new process's counters.
func Rates(samples []Sample) []Row {
	if len(samples) < 2 {
		return nil
	}
	rows := make([]Row, 0, len(samples)-1)
	for i := 1; i < len(samples); i++ {
		p, c := samples[i-1], samples[i]
		dt := (c.T - p.T).Seconds()
		row := Row{T: c.T, Dt: c.T - p.T, Values: make([]float64, len(columns))}
		restarted := false
		if a, ok := p.Values[keyUptime]; ok {
			if b, ok := c.Values[keyUptime]; ok && b < a {
				restarted = true
			}
		}
		for j, col := range columns {
			if dt <= 0 || restarted && col.sql {
				row.Values[j] = nan
				continue
			}
			row.Values[j] = col.value(p.Values, c.Values, dt)
		}
		rows = append(rows, row)
	}
	return rows
}

// Align returns n rows, row k covering the workload's interval k (ending at
// (k+1) × step from Start), whatever ticks were skipped or late: it takes
// the row ending nearest that time, within half a step, or else a longer
// row that spans it (a skipped tick makes one row of two intervals; its
// rates hold for both). An interval no row covers gets a row of NaN.
func Align(rows []Row, step time.Duration, n int) []Row {
	out := make([]Row, n)
	j0 := 0
	for k := range out {
		due := time.Duration(k+1) * step
		for j0 < len(rows) && rows[j0].T < due-step {
			j0++
		}
		best, bestDist := -1, step/2
		span := -1
		for j := j0; j < len(rows) && rows[j].T-rows[j].Dt < due+step/2; j++ {
			d := rows[j].T - due
			if d < 0 {
				d = -d
			}
			if d < bestDist {
				best, bestDist = j, d
			}
			if span < 0 && rows[j].T-rows[j].Dt < due-step/2 && rows[j].T > due-step/2 {
				span = j
			}
		}
		if best < 0 {
			best = span
		}
		if best >= 0 {
			out[k] = Row{T: due, Dt: step, Values: rows[best].Values}
			continue
		}
		empty := make([]float64, len(columns))
		for i := range empty {
			empty[i] = nan
		}
		out[k] = Row{T: due, Dt: step, Values: empty}
	}
	return out
}
