package catalog

import (
	"os"
	"strings"
	"testing"
)

func mustVersion(t *testing.T, s string) MySQLVersion {
	t.Helper()
	v, err := ParseMySQLVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// previous is the release just before v ("8.0.29" before "8.0.30"; the
// last 5.7 before 8.0.0; a series' .0 is preceded by the series before).
func previous(v MySQLVersion) MySQLVersion {
	switch {
	case v.Patch > 0:
		return MySQLVersion{v.Major, v.Minor, v.Patch - 1}
	case v.Major == 8 && v.Minor == 0:
		return MySQLVersion{5, 7, 99}
	}
	return MySQLVersion{v.Major, v.Minor - 1, 99}
}

// The table itself: canonical names, each once, every version a version,
// every refusal with its replacement, and a page of MySQL's manual for
// each entry.
func TestMySQLTableEntries(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, e := range mysqlVariables {
		if e.name != VariableName(e.name) || seen[e.name] {
			t.Errorf("%q: not canonical, or listed twice", e.name)
		}
		seen[e.name] = true
		for what, v := range map[string]string{"since": e.since, "removed": e.removed, "dynamicSince": e.dynamicSince, "deprecated": e.deprecated} {
			if _, err := ParseMySQLVersion(v); v != "" && err != nil {
				t.Errorf("%s: %s %q: %v", e.name, what, v, err)
			}
		}
		if (e.since != "") != (e.before != "") || (e.removed != "") != (e.instead != "") {
			t.Errorf("%s: a since or removed version without what to set instead", e.name)
		}
		if e.class == mysqlReadOnly && e.instead == "" {
			t.Errorf("%s: read-only without what to read instead", e.name)
		}
		if !strings.HasPrefix(e.source, "https://dev.mysql.com/doc/refman/") {
			t.Errorf("%s: source %q is not a page of MySQL's reference manual", e.name, e.source)
		}
	}
	for _, r := range mysqlRenames {
		if seen[r.old] && seen[r.new] {
			t.Errorf("rename %s -> %s: both names have an entry", r.old, r.new)
		}
	}
}

// Every entry's version boundaries, from the table: refused on the
// release before it exists and from the release that removed it (naming
// what to set), needing a restart before it became dynamic, a value
// refused before the release that accepts it; and taken on the boundary
// itself.
func TestMySQLTableBoundaries(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, e := range mysqlVariables {
		if e.since != "" {
			at := mustVersion(t, e.since)
			if _, err := MySQLLookup(previous(at), e.name, ""); err == nil || !strings.Contains(err.Error(), "exists from MySQL "+e.since+" on") || !strings.Contains(err.Error(), "set "+e.before) {
				t.Errorf("%s on %s: %v, want a refusal naming %s", e.name, previous(at), err, e.before)
			}
			if _, err := MySQLLookup(at, e.name, ""); err != nil && e.class != mysqlReadOnly {
				t.Errorf("%s on %s: %v", e.name, at, err)
			}
			checked++
		}
		if e.removed != "" {
			at := mustVersion(t, e.removed)
			if _, err := MySQLLookup(at, e.name, ""); err == nil || !strings.Contains(err.Error(), "removed in MySQL "+e.removed) || !strings.Contains(err.Error(), "set "+e.instead) {
				t.Errorf("%s on %s: %v, want a refusal naming %s", e.name, at, err, e.instead)
			}
			if _, err := MySQLLookup(previous(at), e.name, ""); err != nil && e.class != mysqlReadOnly {
				t.Errorf("%s on %s: %v", e.name, previous(at), err)
			}
			checked++
		}
		// A version that has it: the later of since and 5.7.0.
		has := MySQLVersion{5, 7, 44}
		if e.since != "" {
			has = mustVersion(t, e.since)
		}
		if e.removed != "" && has.AtLeast(e.removed) {
			t.Fatalf("%s: removed before it exists", e.name)
		}
		s, err := MySQLLookup(has, e.name, "")
		switch {
		case e.class == mysqlReadOnly:
			if err == nil || !strings.Contains(err.Error(), "read-only") {
				t.Errorf("%s on %s: %v, want read-only", e.name, has, err)
			}
		case err != nil:
			t.Errorf("%s on %s: %v", e.name, has, err)
		case e.class == mysqlRestart && s.Need != Restart:
			t.Errorf("%s on %s: %s, want restart", e.name, has, s.Need)
		case e.class == mysqlDynamic && e.dynamicSince == "" && s.Need != Dynamic:
			t.Errorf("%s on %s: %s, want dynamic", e.name, has, s.Need)
		}
		if e.dynamicSince != "" {
			at := mustVersion(t, e.dynamicSince)
			if s, _ := MySQLLookup(previous(at), e.name, ""); s.Need != Restart {
				t.Errorf("%s on %s: %s, want restart", e.name, previous(at), s.Need)
			}
			if s, _ := MySQLLookup(at, e.name, ""); s.Need != Dynamic {
				t.Errorf("%s on %s: %s, want dynamic", e.name, at, s.Need)
			}
			checked++
		}
		for val, since := range e.values {
			at := mustVersion(t, since)
			if _, err := MySQLLookup(previous(at), e.name, strings.ToLower(val)); err == nil || !strings.Contains(err.Error(), "accepted from MySQL "+since) {
				t.Errorf("%s = %s on %s: %v, want refused", e.name, val, previous(at), err)
			}
			if _, err := MySQLLookup(at, e.name, val); err != nil {
				t.Errorf("%s = %s on %s: %v", e.name, val, at, err)
			}
			checked++
		}
		if e.deprecated != "" {
			at := mustVersion(t, e.deprecated)
			if s, _ := MySQLLookup(previous(at), e.name, ""); s.Deprecated != "" {
				t.Errorf("%s on %s: deprecated already", e.name, previous(at))
			}
			if s, _ := MySQLLookup(at, e.name, ""); s.Deprecated != e.deprecated && (e.removed == "" || !at.AtLeast(e.removed)) {
				t.Errorf("%s on %s: not deprecated", e.name, at)
			}
			checked++
		}
	}
	if checked < 25 {
		t.Errorf("only %d boundaries checked", checked)
	}
}

// The facts the plan depends on most, spelt out on the versions the
// planner's tests use (5.7.44, 8.0.20, 8.0.36, 8.4.3).
func TestMySQLLookupFacts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version, name, value string
		wantName             string
		need                 Need
		err                  string
	}{
		{"5.7.4", "innodb_buffer_pool_size", "", "innodb_buffer_pool_size", Restart, ""},
		{"5.7.44", "innodb_buffer_pool_size", "1G", "innodb_buffer_pool_size", Dynamic, ""},
		{"8.0.20", "innodb_redo_log_capacity", "", "", 0, "innodb_redo_log_capacity exists from MySQL 8.0.30 on (the server is 8.0.20): set innodb_log_file_size"},
		{"8.0.36", "innodb_redo_log_capacity", "1G", "innodb_redo_log_capacity", Dynamic, ""},
		{"8.0.20", "innodb_log_file_size", "", "innodb_log_file_size", Restart, ""},
		{"8.4.3", "innodb_log_files_in_group", "", "innodb_log_files_in_group", Restart, ""},
		{"5.7.44", "innodb_dedicated_server", "ON", "", 0, "innodb_dedicated_server exists from MySQL 8.0.3 on"},
		{"8.0.36", "innodb_dedicated_server", "ON", "innodb_dedicated_server", Restart, ""},
		{"8.0.36", "binlog_transaction_dependency_tracking", "WRITESET", "binlog_transaction_dependency_tracking", Dynamic, ""},
		{"8.4.3", "binlog_transaction_dependency_tracking", "WRITESET", "", 0, "removed in MySQL 8.4.0 (the server is 8.4.3): set nothing: WRITESET is always used"},
		{"8.0.20", "innodb_doublewrite", "DETECT_ONLY", "", 0, "innodb_doublewrite = DETECT_ONLY is accepted from MySQL 8.0.30 on (the server is 8.0.20)"},
		{"8.0.36", "innodb_doublewrite", "detect_only", "innodb_doublewrite", Restart, ""},
		{"8.0.20", "innodb_doublewrite", "OFF", "innodb_doublewrite", Restart, ""},
		{"5.7.44", "log_bin", "ON", "log_bin", Restart, ""},
		{"8.4.3", "sync_binlog", "0", "sync_binlog", Dynamic, ""},
		{"8.4.3", "innodb_flush_log_at_trx_commit", "2", "innodb_flush_log_at_trx_commit", Dynamic, ""},
		{"8.0.36", "innodb_flush_method", "O_DIRECT", "innodb_flush_method", Restart, ""},
		{"8.4.3", "innodb_io_capacity_max", "4000", "innodb_io_capacity_max", Dynamic, ""},
		{"8.0.36", "tx_isolation", "READ-COMMITTED", "transaction_isolation", Dynamic, ""},
		{"5.7.19", "transaction_isolation", "READ-COMMITTED", "tx_isolation", Dynamic, ""},
		{"5.7.44", "transaction_isolation", "READ-COMMITTED", "transaction_isolation", Dynamic, ""},
		{"8.0.20", "query_cache_size", "0", "", 0, "query_cache_size was removed in MySQL 8.0.3"},
		{"8.4.3", "log_slave_updates", "ON", "log_replica_updates", Restart, ""},
		{"8.0.36", "group_replication_primary_member", "x", "", 0, "read-only on MySQL 8.0.36"},
		{"8.0.36", "some_variable_not_listed", "1", "some_variable_not_listed", Dynamic, ""},
	} {
		s, err := MySQLLookup(mustVersion(t, c.version), c.name, c.value)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s=%s: %v, want %q", c.version, c.name, c.value, err, c.err)
			}
			continue
		}
		if err != nil || s.Name != c.wantName || s.Need != c.need {
			t.Errorf("%s %s=%s: %+v %v, want %s %s", c.version, c.name, c.value, s, err, c.wantName, c.need)
		}
	}
}

// RestartNeed per target: MySQL's by version, MySQL's with the version not
// known (Depends only where the GA releases disagree), MariaDB's, and
// neither known.
func TestRestartNeedPerTarget(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		t    Target
		name string
		want Need
	}{
		{Target{MySQL, "5.7.4"}, "innodb_buffer_pool_size", Restart},
		{Target{MySQL, "5.7.44"}, "innodb_buffer_pool_size", Dynamic},
		{Target{MySQL, ""}, "innodb_buffer_pool_size", Dynamic}, // every GA release resizes it
		{Target{MySQL, "8.0.36"}, "innodb_log_file_size", Restart},
		{Target{MariaDB, ""}, "innodb_log_file_size", Dynamic},
		{Target{}, "innodb_log_file_size", Depends},
		{Target{MySQL, "8.4.3"}, "Innodb-Redo-Log-Capacity", Dynamic},
		{Target{}, "sync_binlog", Dynamic},
		{Target{}, "innodb_flush_method", Restart},
		{Target{MySQL, "8.0.36"}, "log-slave-updates", Restart},
		{TargetOf(MariaDB, "10.11.6-MariaDB"), "thread_handling", Restart},
		{Target{MySQL, "8.0.36"}, "thread_handling", Dynamic}, // not MySQL's: its server says
	} {
		if got := RestartNeed(c.t, c.name); got != c.want {
			t.Errorf("%v %s: %s, want %s", c.t, c.name, got, c.want)
		}
	}
	if got := TargetOf(MariaDB, "10.11.6-MariaDB"); got.Version != "" || got.String() != "mariadb" {
		t.Errorf("MariaDB's target keeps its version: %+v", got)
	}
	if got := TargetOf(MySQL, "8.0.36").String(); got != "mysql 8.0.36" {
		t.Errorf("target %q", got)
	}
}

// Before versions, RestartNeed had one restart-only list per flavor. With
// the version not known its answers are those lists' (MariaDB's
// unchanged), plus the two options MySQL 8.4 added or dropped that the old
// list missed, which now need a restart on MySQL.
func TestRestartNeedWithoutVersionAsBefore(t *testing.T) {
	t.Parallel()
	mysqlBefore := []string{"log_bin", "innodb_doublewrite", "innodb_flush_method", "performance_schema",
		"innodb_autoinc_lock_mode", "innodb_buffer_pool_instances", "innodb_page_size",
		"innodb_data_file_path", "innodb_undo_tablespaces", "innodb_log_group_home_dir",
		"innodb_log_file_size", "innodb_log_files_in_group", "innodb_read_io_threads",
		"innodb_write_io_threads", "innodb_rollback_on_timeout", "innodb_open_files",
		"innodb_use_native_aio", "innodb_dedicated_server", "back_log", "skip_name_resolve",
		"lower_case_table_names", "large_pages", "table_open_cache_instances", "disable_log_bin",
		"skip_log_bin", "log_replica_updates", "log_slave_updates", "mysqlx",
		"group_replication_single_primary_mode", "group_replication_enforce_update_everywhere_checks"}
	was := set(mysqlBefore...)
	added := set("default_authentication_plugin", "mysql_native_password", "group_replication_primary_member")
	names := map[string]bool{}
	for n := range was {
		names[n] = true
	}
	for n := range restartOnly[MariaDB] {
		names[n] = true
	}
	for _, e := range mysqlVariables {
		names[e.name] = true
	}
	for _, r := range mysqlRenames {
		names[r.old], names[r.new] = true, true
	}
	for n := range names {
		wantMySQL := Dynamic
		if was[n] || added[n] {
			wantMySQL = Restart
		}
		if got := RestartNeed(Target{Flavor: MySQL}, n); got != wantMySQL {
			t.Errorf("mysql %s: %s, want %s", n, got, wantMySQL)
		}
		wantMaria := Dynamic
		if restartOnly[MariaDB][n] {
			wantMaria = Restart
		}
		if got := RestartNeed(Target{Flavor: MariaDB}, n); got != wantMaria {
			t.Errorf("mariadb %s: %s, want %s", n, got, wantMaria)
		}
		want := Depends
		if wantMySQL == wantMaria {
			want = wantMySQL
		}
		if got := RestartNeed(Target{}, n); got != want {
			t.Errorf("unknown flavor %s: %s, want %s", n, got, want)
		}
	}
}

// docs/servers.md's per-version table lists every entry of the table, with
// its page of the manual.
func TestMySQLTableInDocs(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/servers.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, e := range mysqlVariables {
		row := ""
		for _, line := range strings.Split(doc, "\n") {
			if strings.HasPrefix(line, "| `"+e.name+"` |") {
				row = line
			}
		}
		if row == "" || !strings.Contains(row, "("+e.source+")") {
			t.Errorf("docs/servers.md: no row for %s citing %s", e.name, e.source)
		}
	}
}
