package tpcc

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"testing"
	"time"

	"benchmatrix/server"

	"github.com/go-sql-driver/mysql"
)

// startSandbox starts a private server for the test, or skips when no
// server binary is installed (outside CI; under CI it fails).
func startSandbox(t testing.TB) *server.Sandbox {
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

// testDB creates database name on the sandbox and returns its endpoint
// and a pool on it.
func testDB(t testing.TB, sb *server.Sandbox, name string) (*mysql.Config, *sql.DB) {
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

func count(t testing.TB, db *sql.DB, q string) int64 {
	t.Helper()
	var n sql.NullInt64
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n.Int64
}

// showCreate is SHOW CREATE TABLE of each table of set n, in order.
func showCreate(t *testing.T, db *sql.DB, n int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range tableKinds {
		var name, ddl string
		if err := db.QueryRow("SHOW CREATE TABLE "+k+strconv.Itoa(n)).Scan(&name, &ddl); err != nil {
			t.Fatal(err)
		}
		out[k] = ddl
	}
	return out
}
