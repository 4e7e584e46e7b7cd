package catalog

import (
	"fmt"
	"strings"
)

// MySQL's variables per version: which versions have a variable, how it
// takes a value there (SET GLOBAL, a restart, or not at all), the values a
// version accepts and the defaults that moved. One table, read by one
// function (mysqlLookup, through RestartNeed and MySQLName), so that the
// plan and the server decide alike. Facts from MySQL's reference manual,
// one page per entry (the Source column of docs/servers.md's table is
// this table's); MySQL cannot be installed where benchmatrix is built.

// How a MySQL variable takes a value.
type mysqlClass int

const (
	// mysqlDynamic: SET GLOBAL (from dynamicSince on, if set).
	mysqlDynamic mysqlClass = iota
	// mysqlRestart: a startup option only.
	mysqlRestart
	// mysqlReadOnly: the server sets it itself; neither SET nor an option.
	mysqlReadOnly
)

// mysqlVariable is one entry of the table. Versions are "8.0.30" texts;
// an empty one means every catalogued series (5.7, 8.0, 8.4).
type mysqlVariable struct {
	name  string
	class mysqlClass
	// dynamicSince: a mysqlDynamic variable needs a restart before it.
	dynamicSince string
	// since, removed: the first version that has it, the first that no
	// longer does; before and instead say what to set there.
	since, before    string
	removed, instead string
	// deprecated: the version that deprecated it (it still works).
	deprecated string
	// values a version accepts only from a version on (upper case).
	values map[string]string
	// defaults that changed: from the version given, the default is this.
	defaults []mysqlDefault
	// source is the manual's page for the facts above.
	source string
}

type mysqlDefault struct{ since, value string }

const (
	man57 = "https://dev.mysql.com/doc/refman/5.7/en/"
	man80 = "https://dev.mysql.com/doc/refman/8.0/en/"
	man84 = "https://dev.mysql.com/doc/refman/8.4/en/"
)

// mysqlVariables are the variables benchmatrix's manifests and presets set
// and the common tuning set. A variable not listed is taken as dynamic; a
// server that refuses it as read-only is restarted for (as on MariaDB).
var mysqlVariables = []mysqlVariable{
	// Durability and the binary log.
	{name: "sync_binlog", source: man80 + "replication-options-binary-log.html#sysvar_sync_binlog"},
	{name: "innodb_flush_log_at_trx_commit", source: man80 + "innodb-parameters.html#sysvar_innodb_flush_log_at_trx_commit"},
	{name: "log_bin", class: mysqlRestart, defaults: []mysqlDefault{{"8.0.0", "ON"}},
		source: man80 + "replication-options-binary-log.html#sysvar_log_bin"},
	{name: "disable_log_bin", class: mysqlRestart, source: man80 + "replication-options-binary-log.html#option_mysqld_log-bin"},
	{name: "skip_log_bin", class: mysqlRestart, source: man80 + "replication-options-binary-log.html#option_mysqld_log-bin"},
	{name: "binlog_format", deprecated: "8.0.34", source: man80 + "replication-options-binary-log.html#sysvar_binlog_format"},
	{name: "binlog_transaction_dependency_tracking", since: "5.7.22", before: "nothing: the commit order is the only dependency tracking",
		removed: "8.4.0", instead: "nothing: WRITESET is always used", deprecated: "8.2.0",
		source: man80 + "replication-options-binary-log.html#sysvar_binlog_transaction_dependency_tracking"},
	{name: "binlog_expire_logs_seconds", since: "8.0.1", before: "expire_logs_days",
		source: man80 + "replication-options-binary-log.html#sysvar_binlog_expire_logs_seconds"},
	{name: "expire_logs_days", removed: "8.4.0", instead: "binlog_expire_logs_seconds", source: man84 + "mysql-nutshell.html"},
	{name: "log_replica_updates", class: mysqlRestart, defaults: []mysqlDefault{{"8.0.0", "ON"}},
		source: man80 + "replication-options-binary-log.html#sysvar_log_replica_updates"},
	{name: "transaction_write_set_extraction", removed: "8.3.0", instead: "nothing: write sets are always extracted with XXHASH64",
		source: man84 + "mysql-nutshell.html"},
	{name: "master_info_repository", removed: "8.3.0", instead: "nothing: the connection metadata is always in a table",
		source: man84 + "mysql-nutshell.html"},
	{name: "relay_log_info_repository", removed: "8.3.0", instead: "nothing: the applier metadata is always in a table",
		source: man84 + "mysql-nutshell.html"},

	// The redo log.
	{name: "innodb_redo_log_capacity", since: "8.0.30", before: "innodb_log_file_size (× innodb_log_files_in_group)",
		source: man80 + "innodb-redo-log.html#innodb-modifying-redo-log-capacity"},
	{name: "innodb_log_file_size", class: mysqlRestart, deprecated: "8.0.30", source: man80 + "innodb-parameters.html#sysvar_innodb_log_file_size"},
	{name: "innodb_log_files_in_group", class: mysqlRestart, deprecated: "8.0.30", source: man80 + "innodb-parameters.html#sysvar_innodb_log_files_in_group"},
	{name: "innodb_log_group_home_dir", class: mysqlRestart, source: man80 + "innodb-parameters.html#sysvar_innodb_log_group_home_dir"},
	{name: "innodb_log_writer_threads", since: "8.0.22", before: "nothing: dedicated log writer threads always run",
		source: man80 + "innodb-parameters.html#sysvar_innodb_log_writer_threads"},

	// Memory, IO and flushing.
	{name: "innodb_buffer_pool_size", dynamicSince: "5.7.5", source: man57 + "innodb-buffer-pool-resize.html"},
	{name: "innodb_buffer_pool_instances", class: mysqlRestart, source: man80 + "innodb-parameters.html#sysvar_innodb_buffer_pool_instances"},
	{name: "innodb_dedicated_server", class: mysqlRestart, since: "8.0.3",
		before: "innodb_buffer_pool_size and innodb_log_file_size yourself", source: man80 + "innodb-dedicated-server.html"},
	{name: "innodb_flush_method", class: mysqlRestart, defaults: []mysqlDefault{{"8.4.0", "O_DIRECT"}},
		source: man84 + "innodb-parameters.html#sysvar_innodb_flush_method"},
	// 8.0.30 made it dynamic between the values that enable the buffer
	// (ON, DETECT_AND_RECOVER, DETECT_ONLY) but not to or from OFF, the
	// change benchmarks make: benchmatrix restarts for every change.
	{name: "innodb_doublewrite", class: mysqlRestart, values: map[string]string{"DETECT_AND_RECOVER": "8.0.30", "DETECT_ONLY": "8.0.30"},
		source: man80 + "innodb-doublewrite-buffer.html"},
	{name: "innodb_io_capacity", defaults: []mysqlDefault{{"8.4.0", "10000"}}, source: man84 + "innodb-parameters.html#sysvar_innodb_io_capacity"},
	{name: "innodb_io_capacity_max", defaults: []mysqlDefault{{"8.4.0", "2 × innodb_io_capacity"}}, source: man84 + "innodb-parameters.html#sysvar_innodb_io_capacity_max"},
	{name: "innodb_adaptive_hash_index", defaults: []mysqlDefault{{"8.4.0", "OFF"}}, source: man84 + "innodb-parameters.html#sysvar_innodb_adaptive_hash_index"},
	{name: "innodb_change_buffering", defaults: []mysqlDefault{{"8.4.0", "none"}}, source: man84 + "innodb-parameters.html#sysvar_innodb_change_buffering"},
	{name: "innodb_read_io_threads", class: mysqlRestart, source: man80 + "innodb-parameters.html#sysvar_innodb_read_io_threads"},
	{name: "innodb_write_io_threads", class: mysqlRestart, source: man80 + "innodb-parameters.html#sysvar_innodb_write_io_threads"},
	{name: "innodb_use_native_aio", class: mysqlRestart, source: man80 + "innodb-parameters.html#sysvar_innodb_use_native_aio"},
	{name: "innodb_open_files", class: mysqlRestart, source: man80 + "innodb-parameters.html#sysvar_innodb_open_files"},
	{name: "large_pages", class: mysqlRestart, source: man80 + "server-system-variables.html#sysvar_large_pages"},

	// Storage layout, fixed when the datadir is made or the server starts.
	{name: "innodb_page_size", class: mysqlRestart, source: man80 + "innodb-parameters.html#sysvar_innodb_page_size"},
	{name: "innodb_data_file_path", class: mysqlRestart, source: man80 + "innodb-parameters.html#sysvar_innodb_data_file_path"},
	{name: "innodb_undo_tablespaces", class: mysqlRestart, source: man57 + "innodb-parameters.html#sysvar_innodb_undo_tablespaces"},
	{name: "lower_case_table_names", class: mysqlRestart, source: man80 + "server-system-variables.html#sysvar_lower_case_table_names"},
	{name: "innodb_file_format", removed: "8.0.0", instead: "nothing: Barracuda is the only file format",
		source: man80 + "added-deprecated-removed.html"},
	{name: "innodb_large_prefix", removed: "8.0.0", instead: "nothing: large index prefixes are always on",
		source: man80 + "added-deprecated-removed.html"},

	// Transactions and locking.
	{name: "transaction_isolation", source: man80 + "server-system-variables.html#sysvar_transaction_isolation"},
	{name: "innodb_autoinc_lock_mode", class: mysqlRestart, defaults: []mysqlDefault{{"8.0.0", "2"}},
		source: man80 + "innodb-parameters.html#sysvar_innodb_autoinc_lock_mode"},
	{name: "innodb_rollback_on_timeout", class: mysqlRestart, source: man80 + "innodb-parameters.html#sysvar_innodb_rollback_on_timeout"},

	// Connections, caches, the server.
	{name: "max_connections", source: man80 + "server-system-variables.html#sysvar_max_connections"},
	{name: "back_log", class: mysqlRestart, source: man80 + "server-system-variables.html#sysvar_back_log"},
	{name: "skip_name_resolve", class: mysqlRestart, source: man80 + "server-system-variables.html#sysvar_skip_name_resolve"},
	{name: "table_open_cache_instances", class: mysqlRestart, source: man80 + "server-system-variables.html#sysvar_table_open_cache_instances"},
	{name: "performance_schema", class: mysqlRestart, source: man80 + "performance-schema-system-variables.html#sysvar_performance_schema"},
	{name: "query_cache_type", removed: "8.0.3", instead: "nothing: MySQL 8.0 has no query cache", source: man57 + "query-cache-configuration.html"},
	{name: "query_cache_size", removed: "8.0.3", instead: "nothing: MySQL 8.0 has no query cache", source: man57 + "query-cache-configuration.html"},
	{name: "mysqlx", class: mysqlRestart, source: man80 + "x-plugin-options-system-variables.html"},
	{name: "default_authentication_plugin", class: mysqlRestart, removed: "8.4.0", instead: "authentication_policy",
		source: man84 + "mysql-nutshell.html"},
	{name: "authentication_policy", since: "8.0.27", before: "default_authentication_plugin",
		source: man80 + "server-system-variables.html#sysvar_authentication_policy"},
	{name: "mysql_native_password", class: mysqlRestart, since: "8.4.0", before: "nothing: the plugin is built in and on",
		source: man84 + "native-pluggable-authentication.html"},

	// Group replication. Its mode is [topology] mode, given to every
	// member at start: the server refuses to change it while the group
	// runs (topology/group.go).
	{name: "group_replication_single_primary_mode", class: mysqlRestart, source: man80 + "group-replication-system-variables.html"},
	{name: "group_replication_enforce_update_everywhere_checks", class: mysqlRestart, source: man80 + "group-replication-system-variables.html"},
	{name: "group_replication_paxos_single_leader", since: "8.0.27", before: "nothing (the leader is not configurable)",
		source: man80 + "group-replication-system-variables.html"},
	{name: "group_replication_primary_member", class: mysqlReadOnly, removed: "8.4.0",
		instead: "performance_schema.replication_group_members.MEMBER_ROLE", source: man84 + "mysql-nutshell.html"},
	{name: "group_replication_recovery_complete_at", removed: "8.4.0", instead: "nothing", source: man84 + "mysql-nutshell.html"},
}

// MySQL renamed its replication variables ("master"/"slave" to
// "source"/"replica") in 8.0.26, and others in between; the old names are
// deprecated aliases for a while and then removed. A manifest may use
// either name: the version the server is decides which one it is given.
// From MySQL's documentation (8.0 and 8.4 "Option and Variable Changes";
// tx_isolation and tx_read_only: server-system-variables.html of 5.7,
// whose transaction_ aliases came in 5.7.20, and of 8.0, which removed
// the tx_ names in 8.0.3).
type mysqlRename struct {
	old, new string
	since    string // the first version with the new name
}

var mysqlRenames = []mysqlRename{
	{"log_slave_updates", "log_replica_updates", "8.0.26"},
	{"slave_parallel_workers", "replica_parallel_workers", "8.0.26"},
	{"slave_parallel_type", "replica_parallel_type", "8.0.26"},
	{"slave_preserve_commit_order", "replica_preserve_commit_order", "8.0.26"},
	{"slave_skip_errors", "replica_skip_errors", "8.0.26"},
	{"sync_master_info", "sync_source_info", "8.0.26"},
	{"rpl_semi_sync_master_enabled", "rpl_semi_sync_source_enabled", "8.0.26"},
	{"rpl_semi_sync_master_timeout", "rpl_semi_sync_source_timeout", "8.0.26"},
	{"rpl_semi_sync_slave_enabled", "rpl_semi_sync_replica_enabled", "8.0.26"},
	{"group_replication_ip_whitelist", "group_replication_ip_allowlist", "8.0.22"},
	{"tx_isolation", "transaction_isolation", "5.7.20"},
	{"tx_read_only", "transaction_read_only", "5.7.20"},
}

// mysqlOldest is the first GA release of the oldest catalogued series
// (5.7.9): a rule that changed before it (innodb_buffer_pool_size became
// dynamic in 5.7.5, a development release) does not make a variable's
// class depend on the version when the version is not known.
const mysqlOldest = "5.7.9"

// mysqlByName indexes the table under both names of a renamed variable.
var mysqlByName = func() map[string]*mysqlVariable {
	m := make(map[string]*mysqlVariable, len(mysqlVariables))
	for i := range mysqlVariables {
		m[mysqlVariables[i].name] = &mysqlVariables[i]
	}
	for _, r := range mysqlRenames {
		if e, ok := m[r.new]; ok {
			m[r.old] = e
		} else if e, ok := m[r.old]; ok {
			m[r.new] = e
		}
	}
	return m
}()

// MySQLSetting is what a MySQL version makes of a variable a manifest
// sets: the name it has there and how it takes a value.
type MySQLSetting struct {
	Name string
	Need Need // Dynamic or Restart
	// Deprecated names the version that deprecated it, if it has.
	Deprecated string
}

// MySQLLookup is the one lookup of the table: the variable's name on
// version v (the renames applied both ways), whether it takes a value by
// SET GLOBAL or only at start there, and a refusal naming what to set
// instead when v does not have it, when the server sets it itself, or
// when v does not accept the value (value "" checks no value).
func MySQLLookup(v MySQLVersion, name, value string) (MySQLSetting, error) {
	n := VariableName(name)
	for _, r := range mysqlRenames {
		switch {
		case n == r.old && v.AtLeast(r.since):
			n = r.new
		case n == r.new && !v.AtLeast(r.since):
			n = r.old
		}
	}
	out := MySQLSetting{Name: n, Need: Dynamic}
	e, ok := mysqlByName[n]
	if !ok {
		return out, nil
	}
	if e.removed != "" && v.AtLeast(e.removed) {
		return out, fmt.Errorf("%s was removed in MySQL %s (the server is %s): set %s", name, e.removed, v, e.instead)
	}
	if e.since != "" && !v.AtLeast(e.since) {
		return out, fmt.Errorf("%s exists from MySQL %s on (the server is %s): set %s", name, e.since, v, e.before)
	}
	if e.class == mysqlReadOnly {
		return out, fmt.Errorf("%s is read-only on MySQL %s: the server sets it, neither SET nor an option changes it; read %s", name, v, e.instead)
	}
	if since, ok := e.values[strings.ToUpper(strings.TrimSpace(value))]; ok && !v.AtLeast(since) {
		return out, fmt.Errorf("%s = %s is accepted from MySQL %s on (the server is %s)", name, value, since, v)
	}
	if e.class == mysqlRestart || (e.dynamicSince != "" && !v.AtLeast(e.dynamicSince)) {
		out.Need = Restart
	}
	if e.deprecated != "" && v.AtLeast(e.deprecated) {
		out.Deprecated = e.deprecated
	}
	return out, nil
}

// mysqlNeedAnyVersion is how a MySQL variable takes a value when the
// version is not known: Depends when that differs between the GA
// releases of the catalogued series that have it.
func mysqlNeedAnyVersion(name string) Need {
	e, ok := mysqlByName[VariableName(name)]
	switch {
	case !ok:
		return Dynamic
	case e.class != mysqlDynamic:
		return Restart
	case e.dynamicSince != "" && versionBefore(mysqlOldest, e.dynamicSince):
		return Depends
	}
	return Dynamic
}

// versionBefore reports whether version a is before version b.
func versionBefore(a, b string) bool {
	va, err := ParseMySQLVersion(a)
	if err != nil {
		return false
	}
	return !va.AtLeast(b)
}

// MySQLName is the name a variable has on a MySQL version (MySQLLookup
// without a value), or a refusal naming what to set instead.
func MySQLName(v MySQLVersion, name string) (string, error) {
	s, err := MySQLLookup(v, name, "")
	if err != nil {
		return "", err
	}
	return s.Name, nil
}
