package catalog

import (
	"strings"
	"testing"
)

// The MySQL series with a catalogue, and the refusal of the others.
func TestCheckMySQLVersion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ v, want string }{
		{"5.7.44", ""}, {"8.0.36-log", ""}, {"8.4.3", ""},
		{"5.6.51", "before 5.7"}, {"8.3.0", "innovation release"}, {"9.1.0", "newer than the catalogue"},
		{"eight", "want major.minor.patch"},
	} {
		_, err := CheckMySQLVersion(c.v)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.v, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.v, err, c.want)
		}
	}
}

// A variable's name on each version: the replica renames both ways, the
// removed and not-yet-existing ones refused with what to set instead.
func TestMySQLName(t *testing.T) {
	t.Parallel()
	cases := []struct{ version, name, want, err string }{
		{"8.4.3", "log_slave_updates", "log_replica_updates", ""},
		{"8.0.26", "log-slave-updates", "log_replica_updates", ""},
		{"8.0.25", "log_replica_updates", "log_slave_updates", ""},
		{"5.7.44", "rpl_semi_sync_source_enabled", "rpl_semi_sync_master_enabled", ""},
		{"8.0.21", "group_replication_ip_allowlist", "group_replication_ip_whitelist", ""},
		{"8.0.36", "sync_binlog", "sync_binlog", ""},
		{"8.4.0", "expire_logs_days", "", "expire_logs_days was removed in MySQL 8.4.0 (the server is 8.4.0): set binlog_expire_logs_seconds"},
		{"8.0.36", "expire_logs_days", "expire_logs_days", ""},
		{"8.4.3", "master_info_repository", "", "removed in MySQL 8.3.0"},
		{"5.7.44", "master_info_repository", "master_info_repository", ""},
		{"8.0.29", "innodb_redo_log_capacity", "", "innodb_redo_log_capacity exists from MySQL 8.0.30 on (the server is 8.0.29): set innodb_log_file_size"},
		{"8.0.30", "innodb_redo_log_capacity", "innodb_redo_log_capacity", ""},
	}
	for _, c := range cases {
		v, err := ParseMySQLVersion(c.version)
		if err != nil {
			t.Fatal(err)
		}
		got, err := MySQLName(v, c.name)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s: got %q %v, want error %q", c.version, c.name, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s %s: got %q %v, want %q", c.version, c.name, got, err, c.want)
		}
	}
}
