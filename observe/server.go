package observe

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"benchmatrix/catalog"
)

// A source is one query the sampler runs per tick. Every query returns two
// columns, a name and a value; the value is stored under prefix+lower(name)
// in Sample.Values, raw (cumulative counters stay cumulative).
type source struct {
	name   string // for notes: "status", "com_commit", ...
	query  string
	prefix string
}

// Raw keys read from the server. Status variables are stored under their
// lower-case name; INNODB_METRICS rows under "metric."; P_S rows under "ps.";
// global variables under "var.".
const (
	keyUptime = "uptime"
)

// Status variables read on both flavors.
var commonStatus = []string{
	"Uptime",
	"Handler_commit",
	"Innodb_data_fsyncs",
	"Innodb_os_log_written",
	"Innodb_buffer_pool_pages_dirty",
	"Innodb_buffer_pool_pages_flushed",
	"Innodb_buffer_pool_reads",
	"Innodb_buffer_pool_wait_free",
	"Innodb_row_lock_waits",
	"Innodb_row_lock_current_waits",
	"Threads_running",
}

// MariaDB 10.x: all in information_schema.GLOBAL_STATUS (names upper-case
// there), including Com_commit; redo fsyncs are not counted apart from
// Innodb_data_fsyncs (no Innodb_os_log_fsyncs in 10.11).
var mariadbStatus = []string{
	"Com_commit",
	"Binlog_group_commits",
	"Innodb_checkpoint_age",
	"Innodb_history_list_length",
}

// MySQL 8.0: performance_schema.global_status has no Com_% counters; the
// redo LSNs are status variables from 8.0.30.
var mysqlStatus = []string{
	"Innodb_os_log_fsyncs",
	"Innodb_redo_log_current_lsn",
	"Innodb_redo_log_checkpoint_lsn",
}

// serverSources returns the queries for one tick on a flavor. MariaDB needs
// one query; MySQL four (status, Com_commit, INNODB_METRICS, P_S binlog).
func serverSources(f catalog.Flavor) []source {
	if f == catalog.MariaDB {
		names := append(append([]string(nil), commonStatus...), mariadbStatus...)
		// sync_binlog and log_bin ride along in the same query: they turn
		// Binlog_group_commits into binlog fsyncs.
		q := "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN (" +
			quoteList(names, true) + ")" +
			" UNION ALL SELECT 'var.sync_binlog', @@global.sync_binlog" +
			" UNION ALL SELECT 'var.log_bin', @@global.log_bin"
		return []source{{name: "status", query: q}}
	}
	names := append(append([]string(nil), commonStatus...), mysqlStatus...)
	return []source{
		{name: "status", query: "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM performance_schema.global_status WHERE VARIABLE_NAME IN (" +
			quoteList(names, false) + ")"},
		{name: "com_commit", query: "SHOW GLOBAL STATUS LIKE 'Com_commit'"},
		// trx_rseg_history_len is enabled by default; log_lsn_checkpoint_age
		// only after SET GLOBAL innodb_monitor_enable='log_lsn%' (used for
		// checkpoint age before 8.0.30).
		{name: "innodb_metrics", prefix: "metric.", query: "SELECT NAME, COUNT FROM information_schema.INNODB_METRICS " +
			"WHERE NAME IN ('trx_rseg_history_len', 'log_lsn_checkpoint_age') AND STATUS = 'enabled'"},
		// COUNT_MISC counts fsync and similar calls on binlog files; empty
		// when performance_schema is OFF.
		{name: "binlog_ps", prefix: "ps.", query: "SELECT 'binlog_count_misc', COUNT_MISC FROM performance_schema.file_summary_by_event_name " +
			"WHERE EVENT_NAME = 'wait/io/file/sql/binlog'"},
	}
}

func quoteList(names []string, upper bool) string {
	q := make([]string, len(names))
	for i, n := range names {
		if upper {
			n = strings.ToUpper(n)
		}
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}

// pairQuerier runs a two-column query and returns its rows as text. The
// sampler's only dependency on a server, so tests can fake it.
type pairQuerier func(ctx context.Context, query string) ([][2]string, error)

// dbQuerier reads pairs through a *sql.DB.
func dbQuerier(db *sql.DB) pairQuerier {
	return func(ctx context.Context, query string) ([][2]string, error) {
		rows, err := db.QueryContext(ctx, query)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out [][2]string
		for rows.Next() {
			var k, v sql.NullString
			if err := rows.Scan(&k, &v); err != nil {
				return nil, err
			}
			out = append(out, [2]string{k.String, v.String})
		}
		return out, rows.Err()
	}
}

// storePairs parses the rows of a source into vals. Names are matched
// case-insensitively (MariaDB's information_schema upper-cases them);
// values that are not numbers (apart from ON/OFF words) are skipped.
func storePairs(vals map[string]float64, prefix string, rows [][2]string) {
	for _, r := range rows {
		v, ok := parseValue(r[1])
		if !ok {
			continue
		}
		name := strings.ToLower(strings.TrimSpace(r[0]))
		if !strings.Contains(name, ".") {
			name = prefix + name
		}
		vals[name] = v
	}
}

func parseValue(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	switch strings.ToUpper(s) {
	case "ON", "YES", "TRUE":
		return 1, true
	case "OFF", "NO", "FALSE":
		return 0, true
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// detectFlavor asks the server what it is.
func detectFlavor(ctx context.Context, db *sql.DB) (catalog.Flavor, error) {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT @@version").Scan(&v); err != nil {
		return "", fmt.Errorf("detect server flavor: %w", err)
	}
	if strings.Contains(strings.ToLower(v), "mariadb") {
		return catalog.MariaDB, nil
	}
	return catalog.MySQL, nil
}
