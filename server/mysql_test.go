package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
)

// The MySQL sandbox path, through a fake mysqld: MySQL cannot be installed
// here. The fake is a shell script in a tarball's layout (bin/mysqld,
// lib/plugin, share/) that answers --version as MySQL's mysqld does, runs
// --initialize-insecure (refusing a datadir with files, as MySQL does, and
// writing auto.cnf with a server_uuid; root@localhost the only account, as
// MySQL's documentation says) by calling MariaDB's mariadb-install-db, and otherwise records its command line and execs
// MariaDB's mariadbd with the options MariaDB does not have dropped or
// renamed back. Chosen over a fake protocol server because the sandbox's
// whole life (start, connect over TCP as root@127.0.0.1 through the init
// file, restart, stop) then runs against a real server; what only MySQL
// would do (its own initialisation, X plugin) is what the fake answers
// from the documentation.

// fakeMySQL makes a fake MySQL tarball of the version and returns its
// mysqld and the file its command lines are recorded in.
func fakeMySQL(t *testing.T, version string) (bin, argLog string) {
	t.Helper()
	mariadbd, err := exec.LookPath("mariadbd")
	if err != nil {
		mariadbd = "/usr/sbin/mariadbd"
	}
	if _, err := os.Stat(mariadbd); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install mariadb-server: %v", err)
		}
		t.Skip("the fake mysqld runs MariaDB's server underneath:", err)
	}
	installDB, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		t.Skip("the fake mysqld initialises with mariadb-install-db:", err)
	}
	base := filepath.Join(t.TempDir(), "mysql-"+version)
	for _, d := range []string{"bin", "share/english", "lib/plugin"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	argLog = filepath.Join(base, "args.log")
	bin = filepath.Join(base, "bin", "mysqld")
	script := fmt.Sprintf(`#!/bin/sh
# A fake MySQL %[1]s mysqld (benchmatrix's tests): MySQL's answers, MariaDB's server.
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
	if [ -d "$datadir" ] && [ -n "$(ls -A "$datadir")" ]; then
		echo "[ERROR] [MY-010457] [Server] --initialize specified but the data directory has files in it. Aborting." >&2
		exit 1
	fi
	%[3]q --no-defaults --datadir="$datadir" --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve $user >/dev/null || exit 1
	# MySQL's --initialize-insecure makes root@localhost only.
	echo "DELETE FROM mysql.global_priv WHERE User = 'root' AND Host <> 'localhost';" |
		%[4]q --no-defaults --bootstrap --datadir="$datadir" --log-error="$datadir/bootstrap.err" $user || exit 1
	rm -f "$datadir/bootstrap.err"
	printf '[auto]\nserver-uuid=3e11fa47-71ca-11e1-9e33-c80aa9429562\n' > "$datadir/auto.cnf"
	exit 0 ;;
esac
first=1
for a in "$@"; do
	if [ $first = 1 ]; then set --; first=0; fi
	case "$a" in
	--basedir=*|--plugin-dir=*|--mysqlx=*) continue ;;
	--log-replica-updates*) a="--log-slave-updates${a#--log-replica-updates}" ;;
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

func readArgs(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// A MySQL 8.4 and a MySQL 5.7 "binary" of a tarball: detected as MySQL of
// that version, initialised with --initialize-insecure and the basedir,
// started with the basedir, plugin directory, init file and the version's
// variable names, reachable as root over 127.0.0.1, restarted and stopped
// with nothing left; a second sandbox of the same binary starts from the
// golden copy without its auto.cnf (its own server_uuid).
func TestMySQLSandboxThroughFakeMysqld(t *testing.T) {
	for _, c := range []struct {
		version      string
		replicaFlag  string
		mysqlx       bool
		otherReplica string
	}{
		{"8.4.3", "--log-replica-updates=ON", true, "--log-slave-updates"},
		{"5.7.44", "--log-slave-updates=ON", false, "--log-replica-updates"},
	} {
		t.Run(c.version, func(t *testing.T) {
			bin, argLog := fakeMySQL(t, c.version)
			base := filepath.Dir(filepath.Dir(bin))
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			tmp := t.TempDir()
			sb, err := StartSandbox(ctx, SandboxConfig{Binary: bin, TempDir: tmp,
				Startup: []Setting{{Name: "log_slave_updates", Value: "ON"}, {Name: "max_connections", Value: "77"}}})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Stop(context.Background())
			info := sb.Info()
			if info.Flavor != catalog.MySQL || info.Version != c.version {
				t.Fatalf("detected %s %s, want mysql %s", info.Flavor, info.Version, c.version)
			}
			lines := readArgs(t, argLog)
			if len(lines) != 2 {
				t.Fatalf("want an initialisation and a start, got %d command lines:\n%s", len(lines), strings.Join(lines, "\n"))
			}
			init, start := lines[0], lines[1]
			for _, want := range []string{"--no-defaults", "--initialize-insecure", "--basedir=" + base, "--datadir=" + sb.datadir()} {
				if !strings.Contains(init, want) {
					t.Errorf("initialisation lacks %s: %s", want, init)
				}
			}
			for _, want := range []string{"--basedir=" + base, "--plugin-dir=" + filepath.Join(base, "lib", "plugin"),
				"--init-file=" + filepath.Join(sb.Dir(), mysqlInitFile), c.replicaFlag, "--max-connections=77", "--skip-name-resolve"} {
				if !strings.Contains(start, want) {
					t.Errorf("start lacks %s: %s", want, start)
				}
			}
			if strings.Contains(start, c.otherReplica) {
				t.Errorf("start has the name %s, which MySQL %s does not use: %s", c.otherReplica, c.version, start)
			}
			if got := strings.Contains(start, "--mysqlx=OFF"); got != c.mysqlx {
				t.Errorf("--mysqlx=OFF given: %v, want %v (5.7 has no such option)", got, c.mysqlx)
			}
			// root over TCP from 127.0.0.1: the init file's account.
			db := openDB(t, sb)
			var host string
			if err := db.QueryRowContext(ctx, "SELECT host FROM mysql.user WHERE user = 'root' AND host = '127.0.0.1'").Scan(&host); err != nil {
				t.Fatalf("root@127.0.0.1 not made by the init file: %v", err)
			}
			var mc int
			if err := db.QueryRowContext(ctx, "SELECT @@global.max_connections").Scan(&mc); err != nil || mc != 77 {
				t.Fatalf("max_connections %d %v", mc, err)
			}
			if err := sb.Restart(ctx, []Setting{{Name: "log_replica_updates", Value: "ON"}}); err != nil {
				t.Fatal(err)
			}
			if last := readArgs(t, argLog); !strings.Contains(last[len(last)-1], c.replicaFlag) {
				t.Errorf("restart with log_replica_updates: %s, want %s", last[len(last)-1], c.replicaFlag)
			}
			if _, err := os.Stat(filepath.Join(sb.datadir(), "auto.cnf")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the first sandbox's auto.cnf should be gone before its start (a fresh server_uuid): %v", err)
			}
			// A second sandbox of the binary: from the golden copy, not
			// initialised again, and without the golden auto.cnf.
			sb2, err := StartSandbox(ctx, SandboxConfig{Binary: bin, TempDir: tmp})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(readArgs(t, argLog)); n != 4 {
				t.Errorf("second sandbox: want one more start and no initialisation, got %d command lines in all", n)
			}
			if _, err := os.Stat(filepath.Join(sb2.datadir(), "auto.cnf")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the copy kept the golden auto.cnf (two servers with one server_uuid): %v", err)
			}
			dirs := []string{sb.Dir(), sb2.Dir()}
			if err := sb2.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := sb.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			for _, d := range dirs {
				if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s left behind", d)
				}
			}
		})
	}
}

// What needs a MySQL binary is refused, naming what is wrong, with exit
// code 2: a path that does not exist, a directory, a binary outside a
// tarball's layout, a version with no catalogue, a variable the version
// does not have.
func TestMySQLBinaryRefusals(t *testing.T) {
	dir := t.TempDir()
	script := func(p, version string) string {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		s := fmt.Sprintf("#!/bin/sh\necho \"$0  Ver %s for Linux on x86_64 (MySQL Community Server - GPL)\"\n", version)
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tarball := func(name, version string) string {
		for _, d := range []string{"share", "lib/plugin"} {
			if err := os.MkdirAll(filepath.Join(dir, name, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return script(filepath.Join(dir, name, "bin", "mysqld"), version)
	}
	ok84 := tarball("mysql-8.4.3", "8.4.3")
	cases := []struct {
		name, binary string
		startup      []Setting
		want         string
	}{
		{"absent", filepath.Join(dir, "nowhere", "bin", "mysqld"), nil, "no such file"},
		{"directory", filepath.Join(dir, "mysql-8.4.3"), nil, `is a directory: give the server in it, binary = "` + ok84 + `"`},
		{"empty directory", dir + "/", nil, "is a directory with no bin/mysqld"},
		{"not a tarball", script(filepath.Join(dir, "loose", "mysqld"), "8.0.36"), nil, "not in a tarball's layout"},
		{"no share", script(filepath.Join(dir, "noshare", "bin", "mysqld"), "8.0.36"), nil, "has no share/ directory"},
		{"9.1", tarball("mysql-9.1.0", "9.1.0"), nil, "MySQL 9.1.0: benchmatrix has no catalogue for this version (newer than the catalogue"},
		{"8.2", tarball("mysql-8.2.0", "8.2.0"), nil, "an innovation release"},
		{"5.6", tarball("mysql-5.6.51", "5.6.51"), nil, "before 5.7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tmp := t.TempDir()
			sb, err := StartSandbox(ctx, SandboxConfig{Binary: c.binary, TempDir: tmp, Startup: c.startup})
			if err == nil {
				sb.Stop(ctx)
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want it to say %q", err, c.want)
			}
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Errorf("exit code %d, want %d", code, exitcode.Usage)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// Variables under the version's names; those it does not have refused
// together, each naming its replacement.
func TestMySQLStartupNames(t *testing.T) {
	t.Parallel()
	in := []Setting{{Name: "log_slave_updates", Value: "ON"}, {Name: "loose_group_replication_ip_whitelist", Value: "127.0.0.1"}, {Name: "sync_binlog", Value: "1"}}
	got, err := MySQLStartup(catalog.MySQL, "8.4.3", in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Setting{{Name: "log_replica_updates", Value: "ON"}, {Name: "loose_group_replication_ip_allowlist", Value: "127.0.0.1"}, {Name: "sync_binlog", Value: "1"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("8.4: %v, want %v", got, want)
	}
	if got, _ := MySQLStartup(catalog.MariaDB, "10.11.19-MariaDB", in); fmt.Sprint(got) != fmt.Sprint(in) {
		t.Errorf("MariaDB's settings changed: %v", got)
	}
	_, err = MySQLStartup(catalog.MySQL, "8.4.3", []Setting{{Name: "expire_logs_days", Value: "3"}, {Name: "default_authentication_plugin", Value: "x"}})
	wantErr := "expire_logs_days was removed in MySQL 8.4.0 (the server is 8.4.3): set binlog_expire_logs_seconds; " +
		"default_authentication_plugin was removed in MySQL 8.4.0 (the server is 8.4.3): set authentication_policy"
	if err == nil || err.Error() != wantErr || exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("got %v (exit %d), want %q (exit 2)", err, exitcode.Of(err), wantErr)
	}
	_, err = MySQLStartup(catalog.MySQL, "5.7.44", []Setting{{Name: "innodb_redo_log_capacity", Value: "1G"}})
	if err == nil || !strings.Contains(err.Error(), "innodb_redo_log_capacity exists from MySQL 8.0.30 on (the server is 5.7.44): set innodb_log_file_size") {
		t.Fatalf("5.7 redo capacity: %v", err)
	}
}

// An official MySQL image's version from its tag, before its server has
// run (for the variable names of the first start); and a running server of
// a series with no catalogue refused.
func TestDockerMySQLImageVersion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		image, want string
		ok          bool
	}{
		{"mysql:8.4", "8.4.0", true},
		{"mysql:8.0.36", "8.0.36", true},
		{"mysql:8.4-oracle", "8.4.0", true},
		{"docker.io/library/mysql:5.7.44", "5.7.44", true},
		{"mysql/mysql-server:8.0", "8.0.0", true},
		{"mysql:latest", "", false},
		{"mysql", "", false},
		{"mariadb:11.4", "", false},
		{"benchmatrix/mariadb:10.11", "", false},
	} {
		got, ok := imageMySQLVersion(c.image)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.image, got, ok, c.want, c.ok)
		}
	}
	d := &Docker{cfg: DockerConfig{Image: "mysql:8.4"}}
	flags, err := d.mysqlFlags([]Setting{{Name: "log_slave_updates", Value: "ON"}})
	if err != nil || len(flags) != 1 || flags[0].Name != "log_replica_updates" {
		t.Errorf("mysql:8.4 before its first start: %v %v", flags, err)
	}
	d.flavor, d.version = catalog.MySQL, "5.7.44" // as read from the running server
	if flags, err := d.mysqlFlags([]Setting{{Name: "log_replica_updates", Value: "ON"}}); err != nil || flags[0].Name != "log_slave_updates" {
		t.Errorf("5.7 server: %v %v", flags, err)
	}
	if err := checkServerVersion(catalog.MySQL, "9.1.0"); err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "no catalogue") {
		t.Errorf("9.1.0: %v", err)
	}
	if err := checkServerVersion(catalog.MariaDB, "11.4.2-MariaDB"); err != nil {
		t.Errorf("MariaDB: %v", err)
	}
}

// A value the version does not accept is refused at start as well (the
// Docker provider learns the version only from the server or the tag).
func TestMySQLStartupValues(t *testing.T) {
	t.Parallel()
	_, err := MySQLStartup(catalog.MySQL, "8.0.20", []Setting{{Name: "innodb_doublewrite", Value: "DETECT_ONLY"}})
	if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "innodb_doublewrite = DETECT_ONLY is accepted from MySQL 8.0.30 on (the server is 8.0.20)") {
		t.Errorf("8.0.20 DETECT_ONLY: %v", err)
	}
	got, err := MySQLStartup(catalog.MySQL, "8.0.36", []Setting{{Name: "innodb_doublewrite", Value: "DETECT_ONLY"}, {Name: "tx_isolation", Value: "READ-COMMITTED"}})
	if err != nil || fmt.Sprint(got) != fmt.Sprint([]Setting{{Name: "innodb_doublewrite", Value: "DETECT_ONLY"}, {Name: "transaction_isolation", Value: "READ-COMMITTED"}}) {
		t.Errorf("8.0.36: %v %v", got, err)
	}
}

// A binary's --version runs once per binary file: asked again, the answer
// is remembered; the file replaced (another version), it is asked again.
func TestDetectBinaryOncePerFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin, calls := filepath.Join(dir, "mysqld"), filepath.Join(dir, "calls")
	write := func(version string) {
		s := fmt.Sprintf("#!/bin/sh\necho x >> %q\necho \"$0  Ver %s for Linux on x86_64 (MySQL Community Server - GPL)\"\n", calls, version)
		if err := os.WriteFile(bin+".new", []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(bin+".new", bin); err != nil { // a new inode, as an upgrade makes
			t.Fatal(err)
		}
	}
	count := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "x")
	}
	ctx := context.Background()
	write("8.0.36")
	for range 3 {
		if b, err := DetectBinary(ctx, bin); err != nil || b.Version != "8.0.36" {
			t.Fatalf("%+v %v", b, err)
		}
	}
	if n := count(); n != 1 {
		t.Errorf("--version ran %d times for one binary, want 1", n)
	}
	write("8.4.3")
	if b, err := DetectBinary(ctx, bin); err != nil || b.Version != "8.4.3" {
		t.Fatalf("replaced binary: %+v %v", b, err)
	}
	if n := count(); n != 2 {
		t.Errorf("--version ran %d times in all, want 2", n)
	}
}
