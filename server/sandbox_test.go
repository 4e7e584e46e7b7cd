package server

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// startTestSandbox starts a real sandbox or skips when no server binary is
// installed (CI installs one; see .ci/run).
func startTestSandbox(t *testing.T, startup []Setting) *Sandbox {
	t.Helper()
	if _, err := FindBinary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install a server: %v", err)
		}
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sb, err := StartSandbox(ctx, SandboxConfig{Startup: startup})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })
	return sb
}

func openDB(t *testing.T, s Server) *sql.DB {
	t.Helper()
	c, err := mysql.NewConnector(s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSandboxStartApplyRestartStop(t *testing.T) {
	sb := startTestSandbox(t, []Setting{{"log_bin", "binlog"}})
	ctx := context.Background()
	db := openDB(t, sb)
	if v, err := ReadGlobal(ctx, db, "log_bin"); err != nil || v != "1" && v != "ON" {
		t.Fatalf("log_bin = %q, %v; want ON", v, err)
	}
	eff, err := ApplyGlobals(ctx, db, []Setting{{"sync_binlog", "1"}, {"innodb_flush_log_at_trx_commit", "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if eff["sync_binlog"] != "1" || eff["innodb_flush_log_at_trx_commit"] != "0" {
		t.Fatalf("effective = %v", eff)
	}
	// A read-only variable is refused as such, so the caller can restart.
	_, err = ApplyGlobals(ctx, db, []Setting{{"innodb_doublewrite", "0"}})
	var ro *ReadOnlyError
	if !asErr(err, &ro) {
		t.Fatalf("innodb_doublewrite: got %v, want ReadOnlyError", err)
	}
	// A value the server rejects carries the server's message.
	_, err = ApplyGlobals(ctx, db, []Setting{{"sync_binlog", "banana"}})
	if err == nil {
		t.Fatal("sync_binlog=banana accepted")
	}
	pid := sb.PID()
	if err := sb.Restart(ctx, []Setting{{"innodb_doublewrite", "false"}}); err != nil {
		t.Fatal(err)
	}
	if sb.PID() == pid {
		t.Fatal("restart kept the same process")
	}
	db2 := openDB(t, sb)
	if v, _ := ReadGlobal(ctx, db2, "innodb_doublewrite"); v != "0" && v != "OFF" {
		t.Fatalf("innodb_doublewrite after restart = %q", v)
	}
	dir := sb.Dir()
	if err := sb.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if sb.Alive() {
		t.Fatal("server still alive after Stop")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("sandbox dir %s still there: %v", dir, err)
	}
}
