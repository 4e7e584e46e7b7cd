package runner

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/experiment"
	"benchmatrix/server"
)

const extPassword = "s3cr3t-Pa55word-xyz"

// externalTarget starts a sandbox to play the external server and makes a
// password-protected user on it. It returns the sandbox's root connection
// and the DSN for the user.
func externalTarget(t *testing.T) (*sql.DB, string) {
	t.Helper()
	needServer(t)
	sb, err := server.StartSandbox(context.Background(), server.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })
	c, _ := mysql.NewConnector(sb.Endpoint())
	root := sql.OpenDB(c)
	t.Cleanup(func() { root.Close() })
	for _, q := range []string{
		"CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '" + extPassword + "'",
		"GRANT ALL ON *.* TO 'bench'@'127.0.0.1'",
		"CREATE DATABASE shop",
		"CREATE TABLE shop.orders (id INT PRIMARY KEY)",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return root, "bench:" + extPassword + "@tcp(" + sb.Endpoint().Addr + ")/"
}

func externalStart(dsn string) StartFunc {
	return func(ctx context.Context, spec StartSpec) (server.Server, error) {
		return server.ConnectExternal(ctx, server.ExternalConfig{DSN: dsn})
	}
}

func global(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	v, err := server.ReadGlobal(context.Background(), db, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// planExternal resolves src with --dsn, as `run --provider external --dsn`
// does.
func planExternal(t *testing.T, dsn, src string) *experiment.Plan {
	t.Helper()
	return planWith(t, src, experiment.Flags{DSN: dsn})
}

const externalManifest = `
[experiment]
duration = "1s"
warmup = "0s"
[server]
provider = "external"
schema = "%s"
[workload]
name = "oltp_point_select"
table_size = 1000
[scenarios]
a = { sync_binlog = 7, innodb_flush_log_at_trx_commit = 0 }
b = { sync_binlog = 9, innodb_flush_log_at_trx_commit = 2 }
`

func TestExternalRestoresGlobalsAndHidesPassword(t *testing.T) {
	root, dsn := externalTarget(t)
	before := [2]string{global(t, root, "sync_binlog"), global(t, root, "innodb_flush_log_at_trx_commit")}
	dir := t.TempDir()
	var log bytes.Buffer
	plan := planExternal(t, dsn, strings.Replace(externalManifest, "%s", "sbtest", 1))
	run, err := Run(context.Background(), plan, Config{OutDir: dir, Start: externalStart(dsn), Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if run.Cells[1].Effective["sync_binlog"] != "9" {
		t.Fatalf("cell b ran with sync_binlog %q", run.Cells[1].Effective["sync_binlog"])
	}
	after := [2]string{global(t, root, "sync_binlog"), global(t, root, "innodb_flush_log_at_trx_commit")}
	if after != before {
		t.Fatalf("globals not restored: before %v, after %v", before, after)
	}
	// The password appears in no result file and no output.
	noPassword(t, log.String(), dir)
}

func TestExternalRestoresAfterInterrupt(t *testing.T) {
	root, dsn := externalTarget(t)
	before := global(t, root, "sync_binlog")
	plan := planExternal(t, dsn, strings.Replace(strings.Replace(externalManifest, "%s", "sbtest", 1), `duration = "1s"`, `duration = "30s"`, 1))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) && global(t, root, "sync_binlog") != "7" {
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		cancel()
	}()
	_, err := Run(ctx, plan, Config{OutDir: t.TempDir(), Start: externalStart(dsn)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if got := global(t, root, "sync_binlog"); got != before {
		t.Fatalf("sync_binlog %q after interrupt, was %q", got, before)
	}
}

func TestExternalRefusals(t *testing.T) {
	root, dsn := externalTarget(t)
	before := global(t, root, "sync_binlog")
	// A restart-only value the server does not have: refused by name
	// before the first cell.
	src := strings.Replace(externalManifest, "%s", "sbtest", 1) + "\n[axes]\ninnodb_doublewrite = [\"OFF\"]\n"
	_, err := Run(context.Background(), planExternal(t, dsn, src), Config{OutDir: t.TempDir(), Start: externalStart(dsn)})
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "innodb_doublewrite") {
		t.Fatalf("restart-only difference: got %v", err)
	}
	// A schema holding somebody else's table: refused unless Force.
	plan := planExternal(t, dsn, strings.Replace(externalManifest, "%s", "shop", 1))
	_, err = Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: externalStart(dsn)})
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("foreign table: got %v", err)
	}
	if _, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: externalStart(dsn), Force: true}); err != nil {
		t.Fatalf("with Force: %v", err)
	}
	var n int
	if err := root.QueryRow("SELECT COUNT(*) FROM shop.orders").Scan(&n); err != nil {
		t.Fatalf("the foreign table is gone: %v", err)
	}
	if got := global(t, root, "sync_binlog"); got != before {
		t.Fatalf("sync_binlog %q after the runs, was %q", got, before)
	}
	// Someone's own sbtest1 (not a sysbench table at all) in an otherwise
	// empty schema: refused by name, with or without Force, and untouched.
	if _, err := root.Exec("CREATE DATABASE theirs"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Exec("CREATE TABLE theirs.sbtest1 (id INT PRIMARY KEY, secret VARCHAR(20))"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Exec("INSERT INTO theirs.sbtest1 VALUES (1, 'keep me')"); err != nil {
		t.Fatal(err)
	}
	theirs := planExternal(t, dsn, strings.Replace(externalManifest, "%s", "theirs", 1))
	for _, force := range []bool{false, true} {
		_, err = Run(context.Background(), theirs, Config{OutDir: t.TempDir(), Start: externalStart(dsn), Force: force})
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "sbtest1 (not created by benchmatrix)") {
			t.Fatalf("foreign sbtest1 (force %v): got %v", force, err)
		}
	}
	var secret string
	if err := root.QueryRow("SELECT secret FROM theirs.sbtest1 WHERE id = 1").Scan(&secret); err != nil || secret != "keep me" {
		t.Fatalf("their sbtest1 was changed: %q %v", secret, err)
	}
	// Tables benchmatrix created itself are known again by the next run.
	if _, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: externalStart(dsn), Force: true}); err != nil {
		t.Fatalf("second run on its own tables: %v", err)
	}
	// A wrong password: the server's message, never the password.
	bad := strings.Replace(dsn, extPassword, "wrong-"+extPassword[:5], 1)
	_, err = Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: externalStart(bad)})
	if err == nil || !strings.Contains(err.Error(), "Access denied") || strings.Contains(err.Error(), "wrong-") {
		t.Fatalf("wrong password: %v", err)
	}
}

// A password written in the manifest's [server] dsn reaches no file: the
// manifest text in run.json is stored without it.
func TestExternalPasswordInManifestNotStored(t *testing.T) {
	_, dsn := externalTarget(t)
	src := strings.Replace(strings.Replace(externalManifest, "%s", "sbtest", 1),
		`provider = "external"`, "provider = \"external\"\ndsn = \""+dsn+"\"", 1)
	dir := t.TempDir()
	run, err := Run(context.Background(), planFrom(t, src), Config{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(run.Manifest, "dsn = \"bench@tcp(") {
		t.Fatalf("stored manifest text: %s", run.Manifest)
	}
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(extPassword)) {
				t.Errorf("password in %s", p)
			}
		}
		return nil
	})
}

// noPassword fails when extPassword is in the log output or in any file
// under dir.
func noPassword(t *testing.T, log, dir string) {
	t.Helper()
	if strings.Contains(log, extPassword) {
		t.Fatal("password in the log output")
	}
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(extPassword)) {
				t.Errorf("password in %s", p)
			}
		}
		return nil
	})
}
