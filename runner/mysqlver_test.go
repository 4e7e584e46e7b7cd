package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
	"benchmatrix/experiment"
)

// versionOnlyMySQL makes a MySQL tarball layout whose bin/mysqld answers
// --version as MySQL of the version does and records any other command
// line (then fails): a plan must run it only for --version.
func versionOnlyMySQL(t *testing.T, version string) (bin, argLog string) {
	t.Helper()
	base := filepath.Join(t.TempDir(), "mysql-"+version)
	for _, d := range []string{"bin", "share", "lib/plugin"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	argLog = filepath.Join(base, "args.log")
	bin = filepath.Join(base, "bin", "mysqld")
	script := fmt.Sprintf("#!/bin/sh\ncase \" $* \" in\n*\" --version \"*) echo \"$0  Ver %s for Linux on x86_64 (MySQL Community Server - GPL)\"; exit 0 ;;\nesac\necho \"$*\" >> %q\nexit 1\n", version, argLog)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, argLog
}

// The plan of a sandbox of a MySQL binary knows its version before
// anything starts (the binary's --version): each variable restarts or is
// SET as that version takes it, and one the version lacks, removed, or
// whose value it does not accept is refused with its key and line, naming
// what to set instead. Fake mysqlds of 5.7.4, 5.7.44, 8.0.20, 8.0.36,
// 8.4.3 and 9.1.0; nothing but --version is ever run.
func TestPlanPerMySQLVersion(t *testing.T) {
	t.Parallel()
	bins := map[string]string{}
	logs := map[string]string{}
	for _, v := range []string{"5.7.4", "5.7.44", "8.0.20", "8.0.36", "8.4.3", "9.1.0"} {
		bins[v], logs[v] = versionOnlyMySQL(t, v)
	}
	manifest := func(version, extra, axis string) *experiment.Manifest {
		src := fmt.Sprintf("[experiment]\norder = \"written\"\n[server]\nbinary = %q\n%s[workload]\nname = \"oltp_read_only\"\n[axes]\n%s\n", bins[version], extra, axis)
		m, err := experiment.Parse("m.toml", src)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []struct {
		version, config, axis string
		cost                  string // the second cell's change
		err                   string // or the refusal
	}{
		{"5.7.4", "", `innodb_buffer_pool_size = ["128M", "256M"]`, "restart", ""},
		{"5.7.44", "", `innodb_buffer_pool_size = ["128M", "256M"]`, "set", ""},
		{"8.0.20", "", `innodb_log_file_size = ["48M", "96M"]`, "restart", ""},
		{"8.0.36", "", `innodb_log_file_size = ["48M", "96M"]`, "restart", ""},
		{"8.0.20", "", `innodb_redo_log_capacity = ["100M", "1G"]`, "",
			"line 8: axes.innodb_redo_log_capacity: innodb_redo_log_capacity exists from MySQL 8.0.30 on (the server is 8.0.20): set innodb_log_file_size"},
		{"8.0.36", "", `innodb_redo_log_capacity = ["100M", "1G"]`, "set", ""},
		{"8.4.3", "", `innodb_redo_log_capacity = ["100M", "1G"]`, "set", ""},
		{"8.0.36", "", `binlog_transaction_dependency_tracking = ["COMMIT_ORDER", "WRITESET"]`, "set", ""},
		{"8.4.3", "", `binlog_transaction_dependency_tracking = ["COMMIT_ORDER", "WRITESET"]`, "",
			"axes.binlog_transaction_dependency_tracking: binlog_transaction_dependency_tracking was removed in MySQL 8.4.0 (the server is 8.4.3): set nothing: WRITESET is always used"},
		{"8.0.20", "", `innodb_doublewrite = ["ON", "DETECT_ONLY"]`, "", "axes.innodb_doublewrite: innodb_doublewrite = DETECT_ONLY is accepted from MySQL 8.0.30 on (the server is 8.0.20)"},
		{"8.0.36", "", `innodb_doublewrite = ["ON", "DETECT_ONLY"]`, "restart", ""},
		{"5.7.44", "", `innodb_dedicated_server = ["OFF", "ON"]`, "", "innodb_dedicated_server exists from MySQL 8.0.3 on (the server is 5.7.44)"},
		{"8.4.3", "", `innodb_dedicated_server = ["OFF", "ON"]`, "restart", ""},
		{"8.0.36", "", `tx_isolation = ["READ-COMMITTED", "REPEATABLE-READ"]`, "set", ""},
		{"5.7.44", "", `log_bin = ["OFF", "ON"]`, "restart", ""},
		{"8.4.3", "", `sync_binlog = ["0", "1"]`, "set", ""},
		{"8.4.3", "[server.config]\nexpire_logs_days = 3\n", `sync_binlog = ["0", "1"]`, "",
			"line 6: server.config.expire_logs_days: expire_logs_days was removed in MySQL 8.4.0 (the server is 8.4.3): set binlog_expire_logs_seconds"},
		{"9.1.0", "", `sync_binlog = ["0", "1"]`, "", "line 4: server.binary: MySQL 9.1.0: benchmatrix has no catalogue for this version"},
	} {
		name := c.version + "/" + strings.Fields(c.axis)[0]
		p, err := Resolve(context.Background(), manifest(c.version, c.config, c.axis), experiment.Flags{})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || exitcode.Of(err) != exitcode.Usage {
				t.Errorf("%s: %v (exit %d), want exit 2 saying %q", name, err, exitcode.Of(err), c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if p.Flavor != catalog.MySQL || p.Version != c.version {
			t.Errorf("%s: planned for %s %q", name, p.Flavor, p.Version)
		}
		if got := p.Cells[1].Change.Cost(); got != c.cost {
			t.Errorf("%s: the second cell's change is %s, want %s", name, got, c.cost)
		}
		var out bytes.Buffer
		if err := p.WriteText(&out); err != nil || !strings.Contains(out.String(), "restarts as on mysql "+c.version+" (") {
			t.Errorf("%s: the plan does not say the version: %v\n%s", name, err, out.String())
		}
		note := "note: innodb_log_file_size is deprecated in MySQL 8.0.30 (the server is " + c.version + ")"
		if got, want := strings.Contains(out.String(), note), strings.HasPrefix(c.axis, "innodb_log_file_size") && atLeast(c.version, "8.0.30"); got != want {
			t.Errorf("%s: the deprecation note printed: %v, want %v\n%s", name, got, want, out.String())
		}
	}
	for v, l := range logs {
		if b, err := os.ReadFile(l); err == nil {
			t.Errorf("%s: the plan ran mysqld for more than --version: %s", v, b)
		}
	}
}

func atLeast(version, than string) bool {
	v, err := catalog.ParseMySQLVersion(version)
	return err == nil && v.AtLeast(than)
}

// MariaDB's plan is unchanged: the flavor from its binary, no version
// kept, innodb_log_file_size SET (restart-only on MySQL of every version).
func TestPlanMariaDBUnchanged(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("mariadbd")
	if err != nil {
		bin = "/usr/sbin/mariadbd"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("no MariaDB server:", err)
	}
	m, err := experiment.Parse("m.toml", fmt.Sprintf("[experiment]\norder = \"written\"\n[server]\nbinary = %q\n[workload]\nname = \"oltp_read_only\"\n[axes]\ninnodb_log_file_size = [\"48M\", \"96M\"]\n", bin))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(context.Background(), m, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Flavor != catalog.MariaDB || p.Version != "" || p.Cells[1].Change.Cost() != "set" {
		t.Errorf("MariaDB: %s %q, second cell %s", p.Flavor, p.Version, p.Cells[1].Change.Cost())
	}
}
