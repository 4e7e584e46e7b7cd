package catalog

import "strings"

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
		"skip_log_bin", "log_replica_updates", "log_slave_updates", "mysqlx"),
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
