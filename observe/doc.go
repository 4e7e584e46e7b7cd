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
// The columns, their kind and what each means are ColumnDocs (rates.go:
// one entry of the columns table each), listed in docs/observing.md, which
// TestColumnsDocumented keeps the same, in order.
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
