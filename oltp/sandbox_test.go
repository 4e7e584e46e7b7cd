package oltp

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"benchmatrix/server"

	"github.com/go-sql-driver/mysql"
)

// startSandbox starts a private server for the test, or skips when no
// server binary is installed (outside CI; under CI it fails).
func startSandbox(t *testing.T) *server.Sandbox {
	t.Helper()
	if _, err := server.FindBinary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install a server: %v", err)
		}
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sb, err := server.StartSandbox(ctx, server.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })
	return sb
}

// needSysbench skips (or fails under CI) when the sysbench binary is
// missing.
func needSysbench(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("sysbench")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install sysbench: %v", err)
		}
		t.Skip("sysbench not installed")
	}
	return p
}

// testDB returns the sandbox's endpoint on database name (created) and a
// pool on it.
func testDB(t *testing.T, sb *server.Sandbox, name string) (*mysql.Config, *sql.DB) {
	t.Helper()
	cfg := sb.Endpoint()
	root, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rdb := sql.OpenDB(root)
	defer rdb.Close()
	if _, err := rdb.Exec("CREATE DATABASE IF NOT EXISTS " + name); err != nil {
		t.Fatal(err)
	}
	cfg = cfg.Clone()
	cfg.DBName = name
	cn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(cn)
	t.Cleanup(func() { db.Close() })
	return cfg, db
}

func countRows(t *testing.T, db *sql.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func portOf(cfg *mysql.Config) int {
	for i := len(cfg.Addr) - 1; i >= 0; i-- {
		if cfg.Addr[i] == ':' {
			p, _ := strconv.Atoi(cfg.Addr[i+1:])
			return p
		}
	}
	return 0
}
