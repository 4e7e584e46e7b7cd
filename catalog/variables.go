package catalog

import "strings"

// restartOnly lists MariaDB's variables that cannot change while the
// server runs (reference/servers.md §3). MySQL's are versioned, in
// mysqlVariables (mysql_variables.go). A variable not listed here that the
// server still refuses with "read only variable" is treated the same way at
// run time, so the list is an optimisation and documentation, not a gate.
var restartOnly = map[Flavor]map[string]bool{
	MariaDB: set("log_bin", "innodb_doublewrite", "innodb_flush_method", "performance_schema",
		"innodb_autoinc_lock_mode", "innodb_buffer_pool_instances", "innodb_page_size",
		"innodb_data_file_path", "innodb_undo_tablespaces", "innodb_log_group_home_dir",
		"innodb_read_io_threads", "innodb_write_io_threads", "innodb_rollback_on_timeout",
		"innodb_open_files", "innodb_use_native_aio", "thread_handling", "back_log",
		"skip_name_resolve", "lower_case_table_names", "large_pages", "table_open_cache_instances"),
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
	// Depends: restart-only on one flavor (or MySQL version) and dynamic
	// on another, and the flavor (or version) is not known yet. The runner
	// treats it as a startup option until the server says what it is.
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

// Target is the server a plan's restart decisions are for: its flavor
// and, for MySQL, whose rules change between versions, its version. A
// zero field is not known yet.
type Target struct {
	Flavor  Flavor
	Version string // MySQL's only: MariaDB's rules here do not depend on it
}

// TargetOf is the target of a server of this flavor and version (the
// version kept for MySQL only).
func TargetOf(f Flavor, version string) Target {
	if f != MySQL {
		version = ""
	}
	return Target{Flavor: f, Version: version}
}

func (t Target) String() string {
	if t.Version == "" {
		return string(t.Flavor)
	}
	return string(t.Flavor) + " " + t.Version
}

// RestartNeed is the one place that decides whether a variable needs a
// restart: from the flavor's catalogue when the flavor is known (MySQL's
// per version, MySQLLookup; on a MySQL server of a version not known yet,
// Depends where the catalogued versions disagree), else from both
// flavors (Depends where they disagree). plan and the runner both ask it.
func RestartNeed(t Target, name string) Need {
	n := VariableName(name)
	switch t.Flavor {
	case MariaDB:
		if restartOnly[MariaDB][n] {
			return Restart
		}
		return Dynamic
	case MySQL:
		if v, err := ParseMySQLVersion(t.Version); err == nil {
			// A variable the version lacks is refused by name (MySQLName);
			// its class does not matter.
			s, _ := MySQLLookup(v, n, "")
			return s.Need
		}
		return mysqlNeedAnyVersion(n)
	}
	maria, mysql := RestartNeed(Target{Flavor: MariaDB}, n), mysqlNeedAnyVersion(n)
	if maria == mysql {
		return maria
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
