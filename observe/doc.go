// Package observe samples a server and its host while a benchmark cell
// runs, and explains the throughput series afterwards: stall episodes,
// their period, and which sampled metrics moved at their onsets.
//
// # Using it from the runner
//
//	db, _ := observe.OpenDB(srv.Endpoint())          // its own pool, one connection
//	s, _ := observe.Start(ctx, observe.Config{DB: db, Flavor: info.Flavor,
//		Datadir: info.Datadir, ServerPID: pid})      // first sample now, T=0
//	... run the measured window ...
//	rows := observe.Align(observe.Rates(s.Stop()), time.Second, len(tps))
//	notes := s.Notes()                              // why a column is empty, gaps
//	rep := observe.DetectStalls(tps, time.Second, observe.StallOptions{})
//	moved := observe.MovedAtOnsets(rows, rep.Episodes)
//
// Start the Sampler at the same instant as the workload's interval clock:
// then Align's row k covers the workload's interval k (Rates' rows follow
// the actual ticks: usually one a second, but a skipped tick makes a row of
// two seconds and the final sample at Stop a short one; Align maps them
// onto the workload's grid). Their values go after the workload's columns
// in intervals.csv, in Columns() order (NaN written as an empty cell).
// TableStats before and after the cell, and Growth, give rows_delta, bytes
// and max(id) growth.
//
// # Sampling
//
// One tick reads every source once: on MariaDB a single query
// (information_schema.GLOBAL_STATUS with VARIABLE_NAME IN (...), plus
// @@global.sync_binlog and @@global.log_bin in the same statement); on
// MySQL four (performance_schema.global_status, SHOW GLOBAL STATUS LIKE
// 'Com_commit', INNODB_METRICS, and performance_schema
// file_summary_by_event_name for the binlog), about 1-2 ms of server work
// in all (servers.md §5.2). /proc/diskstats, /proc/stat, /proc/PID/stat and
// /proc/self/stat are read at the same tick. Ticks are due at k × Interval
// from the start; a tick still running when the next is due is cut off by
// that deadline and the next due tick follows, so there is no drift and no
// queue. A failed query leaves its keys out of that Sample (a gap, counted
// in Notes); the other sources and later ticks go on. Samples store raw
// counters; Rates computes deltas and resets them when the server restarts
// (Uptime goes down).
//
// # Columns
//
// Kind "rate" is a counter's per-second delta over the interval, "gauge"
// the value at the interval's end, "interval" a ratio of deltas over it.
//
//	| column | kind | meaning and source |
//	|---|---|---|
//	| `handler_commits_s` | rate | Handler_commit: storage-engine (internal) commits per second, autocommit statements included. With the binlog on, MariaDB counts about 2 per transaction (two-phase commit: measured 2× the INSERT rate) |
//	| `com_commit_s` | rate | Com_commit: explicit COMMIT statements per second; 0 under autocommit. MariaDB: information_schema.GLOBAL_STATUS; MySQL: SHOW GLOBAL STATUS LIKE 'Com_commit' (not in P_S global_status) |
//	| `data_fsyncs_s` | rate | Innodb_data_fsyncs: InnoDB fsync() calls per second; on MariaDB this includes the redo log's |
//	| `redo_fsyncs_s` | rate | Innodb_os_log_fsyncs: redo log fsyncs per second. MySQL only; MariaDB 10.11 does not count them apart, so the column is empty there |
//	| `binlog_fsyncs_s` | rate | binary log fsyncs per second. MariaDB: Binlog_group_commits / sync_binlog (exact for sync_binlog=1, an estimate for N>1, 0 when sync_binlog=0 or log_bin=OFF). MySQL: performance_schema.file_summary_by_event_name 'wait/io/file/sql/binlog' COUNT_MISC (empty when performance_schema=OFF) |
//	| `redo_kb_s` | rate | Innodb_os_log_written: redo written per second, KiB/s |
//	| `dirty_pages` | gauge | Innodb_buffer_pool_pages_dirty: modified buffer-pool pages not yet flushed |
//	| `pages_flushed_s` | rate | Innodb_buffer_pool_pages_flushed: buffer-pool pages written per second |
//	| `checkpoint_age_kb` | gauge | redo not yet checkpointed, KiB. MariaDB: Innodb_checkpoint_age. MySQL 8.0.30+: Innodb_redo_log_current_lsn − Innodb_redo_log_checkpoint_lsn; older MySQL: INNODB_METRICS log_lsn_checkpoint_age if enabled (SET GLOBAL innodb_monitor_enable='log_lsn%'), else empty |
//	| `history_list_len` | gauge | purge lag (undo log history length). MariaDB: Innodb_history_list_length; MySQL: INNODB_METRICS trx_rseg_history_len |
//	| `threads_running` | gauge | Threads_running: sessions executing a statement, the sampler's own included (so ≥ 1) |
//	| `row_lock_waits_s` | rate | Innodb_row_lock_waits: row lock waits begun per second |
//	| `row_lock_current_waits` | gauge | Innodb_row_lock_current_waits: row lock waits in progress |
//	| `bp_disk_reads_s` | rate | Innodb_buffer_pool_reads: buffer-pool misses that read a page from disk, per second |
//	| `bp_wait_free_s` | rate | Innodb_buffer_pool_wait_free: waits for a free page per second (flushing cannot keep up) |
//	| `table_max_id` | gauge | the workload tables' largest id (SELECT MAX(id), read from the primary key's end each second): how fast ids are used up, which a re-insert with a new AUTO_INCREMENT id grows without bound (tables.go) |
//	| `table_rows_est` | gauge | the workload tables' row estimate (information_schema.TABLES.TABLE_ROWS summed: InnoDB's sampled statistic, refreshed after about 10 % of the rows change; MySQL caches it for information_schema_stats_expiry) (tables.go) |
//	| `disk_iops` | rate | /proc/diskstats line of the device under the datadir: reads + writes completed per second (sar -d tps, without discards) |
//	| `disk_read_kb_s` | rate | /proc/diskstats: KiB read per second (sectors × 512) |
//	| `disk_write_kb_s` | rate | /proc/diskstats: KiB written per second (sectors × 512) |
//	| `disk_flushes_s` | rate | /proc/diskstats: cache-flush requests completed per second (what fsync sends to the device); kernel ≥ 5.5, else empty |
//	| `disk_await_ms` | interval | /proc/diskstats: mean time per read or write completed in the interval, queueing included, ms (sar -d await); 0 when no I/O |
//	| `disk_util_pct` | interval | /proc/diskstats: share of the interval the device had I/O in flight, % (sar -d %util) |
//	| `cpu_server_pct` | interval | /proc/PID/stat utime+stime of the server process, % of one CPU (can exceed 100); empty when the PID is unknown or changed |
//	| `cpu_client_pct` | interval | /proc/self/stat utime+stime of benchmatrix itself (load generator and sampler), % of one CPU |
//	| `run_delay_server_pct` | interval | /proc/PID/task/*/schedstat: time the server's threads were ready to run but waited for a CPU, % of one CPU (rundelay.go); high when the host takes the CPUs, not when the server waits on a lock or the disk |
//	| `run_delay_client_pct` | interval | /proc/self/task/*/schedstat: the same for benchmatrix's own threads (the load generator) |
//	| `cpu_user_pct` | interval | /proc/stat host CPU in user mode (user + nice), % of all CPUs |
//	| `cpu_system_pct` | interval | /proc/stat host CPU in the kernel (system + irq + softirq), % of all CPUs |
//	| `cpu_iowait_pct` | interval | /proc/stat host CPU idle with I/O outstanding, % of all CPUs |
//	| `cpu_steal_pct` | interval | /proc/stat host CPU stolen by the hypervisor, % of all CPUs (a noisy neighbour) |
//	| `disk_writes_s` | rate | /proc/diskstats: writes completed per second on the device under the datadir |
//	| `server_io_kb_s` | rate | /proc/PID/io read_bytes + write_bytes − cancelled_write_bytes of the server process: KiB per second it caused to be read from or written to storage (page-cache writes counted when dirtied); empty when the PID is unknown or changed |
//	| `cpu_other_pct` | interval | host CPU (user + system, /proc/stat) used by neither the server nor benchmatrix, % of one CPU: contention from other processes; empty when the server PID is unknown |
//	| `disk_other_kb_s` | rate | device KiB/s (read + written, /proc/diskstats) not caused by the server process (/proc/PID/io): IO of other processes on the datadir's device, plus the filesystem's journal; empty when the PID is unknown |
//	| `disk_avgqu_sz` | interval | /proc/diskstats weighted time doing I/O (field 11 of the stats) / interval: the average number of requests in flight or queued on the device under the datadir (sar -d avgqu-sz, iostat aqu-sz) |
//	| `disk_avg_req_kb` | interval | /proc/diskstats: KiB per read or write completed in the interval (sectors × 512 / IOs; sar -d areq-sz); 0 when no I/O |
//	| `cg_reads_s` | rate | reads per second by the server's own cgroup on the datadir's device (all devices when it is unknown), as the block throttle counts them: v1 blkio.throttle.io_serviced, v2 io.stat rios. v1 sees the IO the group's threads submit (direct and synchronous), not page-cache writeback done by kernel threads; empty when the server has no cgroup (a sandbox without limits) |
//	| `cg_writes_s` | rate | writes per second by the server's cgroup on that device: v1 blkio.throttle.io_serviced, v2 io.stat wios (what disk_write_iops caps) |
//	| `cg_read_kb_s` | rate | KiB read per second by the server's cgroup on that device: v1 blkio.throttle.io_service_bytes, v2 io.stat rbytes |
//	| `cg_write_kb_s` | rate | KiB written per second by the server's cgroup on that device: v1 blkio.throttle.io_service_bytes, v2 io.stat wbytes |
//	| `cg_io_stall_pct` | interval | share of the interval in which some task of the server's cgroup waited on IO (throttled or not), %: v2 io.pressure "some" total; empty on cgroup v1, which reports no per-group IO wait |
//	| `cg_memory_mb` | gauge | memory charged to the server's cgroup, page cache included, MiB: v1 memory.usage_in_bytes, v2 memory.current |
//	| `cg_memory_limit_hits_s` | rate | times per second the server's cgroup reached its memory limit (the kernel reclaimed its memory, page cache first, to stay under it): v1 memory.failcnt, v2 memory.events max |
//	| `cg_cpu_throttled_periods_s` | rate | CFS periods (100 ms) per second in which the server's cgroup used up its CPU quota and was held back: cpu.stat nr_throttled (v1 and v2) |
//	| `cg_cpu_throttled_ms_s` | rate | milliseconds per second the CPU quota held the server's cgroup back (summed over its CPUs' run queues, so it can exceed 1000): cpu.stat v1 throttled_time, v2 throttled_usec |
//
// The disk is found from the datadir: stat(datadir).st_dev → major:minor →
// the /proc/diskstats line with the same numbers (a partition, a
// device-mapper volume or a whole disk alike). When there is no such line
// (overlay, tmpfs, btrfs: an anonymous 0:N device) or no datadir (a remote
// server), the disk columns are empty and Notes says why. CPU ticks are in
// USER_HZ, taken as 100 (true on every mainstream Linux architecture).
//
// The cg_* columns read the server's own cgroup when it has one
// (Config.Cgroup: a sandbox under limits, any Docker container): v1
// blkio/cpu/memory files or the v2 group's io.stat, io.pressure, cpu.stat
// and memory.current (cgroup.go lists them). A sandbox without limits has
// no cgroup of its own, and then they are empty and Notes says so.
//
// # What was verified where
//
// MariaDB 10.11 (Debian 12's mariadbd) is verified for real by the
// integration tests: every MariaDB query, status name and column above,
// the disk columns on ext4 over /dev/vda, the injected stalls and their
// period, and table growth. MySQL is not installable on this host: its
// queries are written from the MySQL 8.0 manual and servers.md §5
// (performance_schema.global_status; SHOW GLOBAL STATUS for Com_commit;
// INNODB_METRICS with STATUS='enabled'; Innodb_os_log_fsyncs and the
// Innodb_redo_log_*_lsn status variables of 8.0.30+; the binlog's
// COUNT_MISC in file_summary_by_event_name). Their parsing and the column
// formulas are unit-tested with a fake server; three of the four MySQL
// queries (P_S global_status, SHOW GLOBAL STATUS, the P_S binlog summary)
// also run for real against MariaDB with performance_schema=ON, which has
// the same tables. The INNODB_METRICS query (STATUS column) and the
// MySQL-only status names have never met a real MySQL.
//
// # Stalls
//
// DetectStalls is a pure function of the per-interval throughput: median,
// episodes below Fraction × median (dips that never reach zero included),
// the drain at the end and a single ramp-up first interval left out, a
// period from the gaps between onsets confirmed by the autocorrelation.
// See its comment for the exact rules; anchors.md §3.6 for the background.
// Injector makes known stalls (FLUSH TABLES WITH READ LOCK held for Hold
// every Every) to test all of this end to end.
package observe
