package catalog

import (
	"fmt"
	"strings"
)

// restartOnly lists variables that cannot change while the server runs, by
// flavor (reference/servers.md §3). A variable not listed here that the
// server still refuses with "read only variable" is treated the same way at
// run time, so the list is an optimisation and documentation, not a gate.
var restartOnly = map[Flavor]map[string]bool{
	MariaDB: set("log_bin", "innodb_doublewrite", "innodb_flush_method", "performance_schema",
		"innodb_autoinc_lock_mode", "innodb_buffer_pool_instances", "innodb_page_size",
		"innodb_data_file_path", "innodb_undo_tablespaces", "innodb_log_group_home_dir",
		"innodb_read_io_threads", "innodb_write_io_threads", "innodb_rollback_on_timeout",
		"innodb_open_files", "innodb_use_native_aio", "thread_handling", "back_log",
		"skip_name_resolve", "lower_case_table_names", "large_pages", "table_open_cache_instances"),
	MySQL: set("log_bin", "innodb_doublewrite", "innodb_flush_method", "performance_schema",
		"innodb_autoinc_lock_mode", "innodb_buffer_pool_instances", "innodb_page_size",
		"innodb_data_file_path", "innodb_undo_tablespaces", "innodb_log_group_home_dir",
		"innodb_log_file_size", "innodb_log_files_in_group", "innodb_read_io_threads",
		"innodb_write_io_threads", "innodb_rollback_on_timeout", "innodb_open_files",
		"innodb_use_native_aio", "innodb_dedicated_server", "back_log", "skip_name_resolve",
		"lower_case_table_names", "large_pages", "table_open_cache_instances", "disable_log_bin",
		"skip_log_bin", "log_replica_updates", "log_slave_updates", "mysqlx",
		// Refused while group replication runs; the group's mode is
		// [topology] mode, started with every member (topology/group.go).
		"group_replication_single_primary_mode", "group_replication_enforce_update_everywhere_checks"),
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// VariableName turns an option or variable name into the canonical
// variable form used by SET GLOBAL and @@global (lower case, underscores).
func VariableName(name string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
}

// Need is how a server variable takes a new value.
type Need int

// The ways a variable takes a value.
const (
	// Dynamic: SET GLOBAL while the server runs.
	Dynamic Need = iota
	// Restart: only as a startup option.
	Restart
	// Depends: restart-only on one flavor and dynamic on the other, and
	// the flavor is not known yet. The runner treats it as a startup
	// option until the server says which flavor it is.
	Depends
)

func (n Need) String() string {
	switch n {
	case Restart:
		return "restart"
	case Depends:
		return "depends on the flavor"
	}
	return "dynamic"
}

// RestartNeed is the one place that decides whether a variable needs a
// restart: from the flavor's catalogue when the flavor is known, else from
// both (Depends where they disagree). plan and the runner both ask it.
func RestartNeed(f Flavor, name string) Need {
	n := VariableName(name)
	if f != "" {
		if restartOnly[f][n] {
			return Restart
		}
		return Dynamic
	}
	count := 0
	for _, fl := range Flavors {
		if restartOnly[fl][n] {
			count++
		}
	}
	switch count {
	case 0:
		return Dynamic
	case len(Flavors):
		return Restart
	}
	return Depends
}

// RecordedVariables are read back for every cell, whatever the manifest
// sets, so that each result says how the server was configured.
var RecordedVariables = []string{
	"version", "version_comment", "log_bin", "sync_binlog", "innodb_flush_log_at_trx_commit",
	"binlog_format", "innodb_buffer_pool_size", "innodb_doublewrite", "innodb_flush_method",
	"innodb_log_file_size", "innodb_io_capacity", "performance_schema", "max_connections",
	"transaction_isolation", "innodb_autoinc_lock_mode", "default_storage_engine",
}

// MySQL renamed its replication variables ("master"/"slave" to
// "source"/"replica") in 8.0.26, and others in between; the old names are
// deprecated aliases for a while and then removed. A manifest may use
// either name: the version the server is decides which one it is given.
// From MySQL's documentation (8.0 and 8.4 "Option and Variable Changes").
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
}

// mysqlGone are variables a MySQL version no longer has, with the version
// that removed them and what to set instead.
var mysqlGone = map[string]struct{ removed, instead string }{
	"default_authentication_plugin":          {"8.4.0", "authentication_policy"},
	"expire_logs_days":                       {"8.4.0", "binlog_expire_logs_seconds"},
	"master_info_repository":                 {"8.3.0", "nothing: the connection metadata is always in a table"},
	"relay_log_info_repository":              {"8.3.0", "nothing: the applier metadata is always in a table"},
	"transaction_write_set_extraction":       {"8.3.0", "nothing: write sets are always extracted with XXHASH64"},
	"binlog_transaction_dependency_tracking": {"8.4.0", "nothing: WRITESET is always used"},
	"group_replication_primary_member":       {"8.4.0", "performance_schema.replication_group_members.MEMBER_ROLE"},
	"group_replication_recovery_complete_at": {"8.4.0", "nothing"},
}

// mysqlSince are variables that exist only from a version on, with what
// older versions have instead.
var mysqlSince = map[string]struct{ since, before string }{
	"innodb_redo_log_capacity":              {"8.0.30", "innodb_log_file_size (× innodb_log_files_in_group)"},
	"authentication_policy":                 {"8.0.27", "default_authentication_plugin"},
	"binlog_expire_logs_seconds":            {"8.0.1", "expire_logs_days"},
	"group_replication_paxos_single_leader": {"8.0.27", "nothing (the leader is not configurable)"},
	"mysql_native_password":                 {"8.4.0", "nothing: the plugin is built in and on"},
}

// MySQLName is the name a variable has on a MySQL version: the
// replication renames applied both ways (log_slave_updates is
// log_replica_updates on 8.0.26+, and the other way before), and a
// refusal naming the replacement for a variable the version does not have.
func MySQLName(v MySQLVersion, name string) (string, error) {
	n := VariableName(name)
	for _, r := range mysqlRenames {
		switch {
		case n == r.old && v.AtLeast(r.since):
			n = r.new
		case n == r.new && !v.AtLeast(r.since):
			n = r.old
		}
	}
	if g, ok := mysqlGone[n]; ok && v.AtLeast(g.removed) {
		return "", fmt.Errorf("%s was removed in MySQL %s (the server is %s): set %s", name, g.removed, v, g.instead)
	}
	if s, ok := mysqlSince[n]; ok && !v.AtLeast(s.since) {
		return "", fmt.Errorf("%s exists from MySQL %s on (the server is %s): set %s", name, s.since, v, s.before)
	}
	return n, nil
}
