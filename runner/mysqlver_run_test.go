package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchmatrix/experiment"
)

// fakeMySQLOverMariaDB is a MySQL tarball of the version whose mysqld
// answers --version as MySQL does, initialises with mariadb-install-db, and
// otherwise records its command line and runs MariaDB's mariadbd without
// the options MariaDB lacks (server/mysql_test.go has the fuller fake the
// server package's tests use).
func fakeMySQLOverMariaDB(t *testing.T, version string) (bin, argLog string) {
	t.Helper()
	mariadbd, err := exec.LookPath("mariadbd")
	if err != nil {
		mariadbd = "/usr/sbin/mariadbd"
	}
	installDB, err2 := exec.LookPath("mariadb-install-db")
	if _, err := os.Stat(mariadbd); err != nil || err2 != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install mariadb-server: %v %v", err, err2)
		}
		t.Skip("the fake mysqld runs MariaDB's server underneath")
	}
	base := filepath.Join(t.TempDir(), "mysql-"+version)
	for _, d := range []string{"bin", "share", "lib/plugin"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	argLog = filepath.Join(base, "args.log")
	bin = filepath.Join(base, "bin", "mysqld")
	script := fmt.Sprintf(`#!/bin/sh
case " $* " in
*" --version "*) echo "$0  Ver %[1]s for Linux on x86_64 (MySQL Community Server - GPL)"; exit 0 ;;
esac
echo "$*" >> %[2]q
datadir=; user=
for a in "$@"; do
	case "$a" in
	--datadir=*) datadir=${a#--datadir=} ;;
	--user=*) user=$a ;;
	esac
done
case " $* " in
*" --initialize-insecure "*)
	exec %[3]q --no-defaults --datadir="$datadir" --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve $user >/dev/null ;;
esac
first=1
for a in "$@"; do
	if [ $first = 1 ]; then set --; first=0; fi
	case "$a" in
	--basedir=*|--plugin-dir=*|--mysqlx=*) continue ;;
	esac
	set -- "$@" "$a"
done
exec %[4]q "$@"
`, version, argLog, installDB, mariadbd)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, argLog
}

// A run carries out the plan's per-version decisions on a (fake) MySQL
// 8.0.36: innodb_log_file_size, which MariaDB underneath would take by SET
// GLOBAL, is restart-only on every MySQL version, so the second cell
// restarts the server with the new value (and no override says the run did
// otherwise); sync_binlog is SET. Nothing is left behind.
func TestRunFollowsMySQLVersionRules(t *testing.T) {
	bin, argLog := fakeMySQLOverMariaDB(t, "8.0.36")
	src := fmt.Sprintf(`[experiment]
order = "written"
duration = "2s"
warmup = "0s"
observe = false
[server]
binary = %q
[workload]
name = "oltp_point_select"
tables = 1
table_size = 100
threads = 1
[scenarios]
a = { innodb_log_file_size = "48M", sync_binlog = 0 }
b = { innodb_log_file_size = "96M", sync_binlog = 1 }
`, bin)
	m, err := experiment.Parse("m.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	plan, err := Resolve(ctx, m, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Version != "8.0.36" || plan.Cells[1].Change.Cost() != "restart+set" {
		t.Fatalf("plan for %s %s: second cell %s, want restart+set", plan.Flavor, plan.Version, plan.Cells[1].Change.Cost())
	}
	run, err := Run(ctx, plan, Config{OutDir: t.TempDir(), Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if left := ourServers(t); len(left) > 0 {
		t.Fatalf("server processes left after the run: %v", left)
	}
	if len(run.Cells) != 2 {
		t.Fatalf("%d cells", len(run.Cells))
	}
	for _, c := range run.Cells {
		if c.Status != "ok" {
			t.Fatalf("cell %s: %s %s", c.Name, c.Status, c.Error)
		}
	}
	second := run.Cells[1]
	if second.Change.Cost() != "restart+set" || len(second.Change.Overrides) > 0 {
		t.Errorf("second cell's change %s, overrides %v; want restart+set as planned", second.Change.Cost(), second.Change.Overrides)
	}
	if got := second.Effective["innodb_log_file_size"]; got != "100663296" {
		t.Errorf("innodb_log_file_size %q, want 96M", got)
	}
	if got := second.Effective["sync_binlog"]; got != "1" {
		t.Errorf("sync_binlog %q, want 1", got)
	}
	lines, _ := os.ReadFile(argLog)
	starts := 0
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		if strings.Contains(l, "--initialize-insecure") {
			continue
		}
		starts++
		if starts == 2 && !strings.Contains(l, "--innodb-log-file-size=96M") {
			t.Errorf("the restart's command line lacks --innodb-log-file-size=96M: %s", l)
		}
		if strings.Contains(l, "sync-binlog") {
			t.Errorf("sync_binlog given as a startup option: %s", l)
		}
	}
	if starts != 2 {
		t.Errorf("%d server starts, want 2 (the first cell's, the restart)", starts)
	}
}
