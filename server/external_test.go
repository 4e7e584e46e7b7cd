package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchmatrix/catalog"
)

// externalPassword has characters a careless DSN or error formatter would
// mangle or echo.
const externalPassword = "Ext-S3cret!pw#42"

// TestExternal runs the external provider against a sandbox standing in for
// someone else's server, reached as a password-protected user.
func TestExternal(t *testing.T) {
	sb := startTestSandbox(t, nil)
	ctx := context.Background()
	root := openDB(t, sb)
	for _, q := range []string{
		"CREATE USER 'bench'@'%' IDENTIFIED BY '" + externalPassword + "'",
		"GRANT ALL PRIVILEGES ON *.* TO 'bench'@'%'",
	} {
		if _, err := root.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	addr := sb.Info().Address
	dsn := "bench:" + externalPassword + "@tcp(" + addr + ")/"

	connect := func(t *testing.T) *External {
		t.Helper()
		e, err := ConnectExternal(ctx, ExternalConfig{DSN: dsn})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Stop(context.Background()) })
		return e
	}
	read := func(t *testing.T, name string) string {
		t.Helper()
		v, err := ReadGlobal(ctx, root, name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	watched := []string{"sync_binlog", "innodb_flush_log_at_trx_commit", "max_connections", "innodb_io_capacity"}
	snapshot := func(t *testing.T) map[string]string {
		m := map[string]string{}
		for _, n := range watched {
			m[n] = read(t, n)
		}
		return m
	}

	t.Run("info has no password", func(t *testing.T) {
		e := connect(t)
		info := e.Info()
		if info.Provider != "external" || info.Address != addr || info.Flavor != sb.Info().Flavor || info.Version == "" {
			t.Fatalf("info = %+v", info)
		}
		b, _ := json.Marshal(info)
		if strings.Contains(string(b)+e.String(), externalPassword) {
			t.Fatalf("password in %s / %s", b, e)
		}
		if e.Endpoint().Passwd != externalPassword {
			t.Fatal("endpoint lost the password")
		}
	})

	t.Run("apply then stop restores", func(t *testing.T) {
		before := snapshot(t)
		e := connect(t)
		eff, err := e.ApplyGlobals(ctx, []Setting{{"sync_binlog", "7"}, {"innodb_flush_log_at_trx_commit", "2"}, {"max_connections", "77"}})
		if err != nil {
			t.Fatal(err)
		}
		if eff["sync_binlog"] != "7" || eff["innodb_flush_log_at_trx_commit"] != "2" || eff["max_connections"] != "77" {
			t.Fatalf("effective = %v", eff)
		}
		// A second change must not overwrite the remembered original.
		if _, err := e.ApplyGlobals(ctx, []Setting{{"sync_binlog", "3"}}); err != nil {
			t.Fatal(err)
		}
		if got := read(t, "sync_binlog"); got != "3" {
			t.Fatalf("sync_binlog seen from another connection = %s", got)
		}
		if o := e.Originals(); o["sync_binlog"] != before["sync_binlog"] || len(o) != 3 {
			t.Fatalf("originals = %v, before = %v", o, before)
		}
		if err := e.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if after := snapshot(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("after Stop %v, before %v", after, before)
		}
		// Stop left the server itself running.
		if err := root.PingContext(ctx); err != nil {
			t.Fatalf("server gone after Stop: %v", err)
		}
		if _, err := e.ApplyGlobals(ctx, []Setting{{"sync_binlog", "1"}}); err == nil {
			t.Fatal("ApplyGlobals after Stop succeeded")
		}
	})

	t.Run("restore after an error mid-way", func(t *testing.T) {
		before := snapshot(t)
		e := connect(t)
		_, err := e.ApplyGlobals(ctx, []Setting{{"innodb_io_capacity", "1234"}, {"innodb_doublewrite", "OFF"}, {"sync_binlog", "1"}})
		var ro *ReadOnlyError
		if !errors.As(err, &ro) || ro.Name != "innodb_doublewrite" {
			t.Fatalf("got %v, want ReadOnlyError for innodb_doublewrite", err)
		}
		_, err = e.ApplyGlobals(ctx, []Setting{{"max_connections", "55"}, {"sync_binlog", "banana"}})
		if err == nil || !strings.Contains(err.Error(), "sync_binlog") {
			t.Fatalf("sync_binlog=banana: %v", err)
		}
		if got := read(t, "innodb_io_capacity"); got != "1234" {
			t.Fatalf("innodb_io_capacity = %s", got)
		}
		// Only what really changed is remembered: not innodb_doublewrite
		// (refused) nor sync_binlog (never reached, then refused).
		if o := e.Originals(); len(o) != 2 || o["innodb_io_capacity"] == "" || o["max_connections"] == "" {
			t.Fatalf("originals = %v", o)
		}
		if err := e.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if after := snapshot(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("after Stop %v, before %v", after, before)
		}
	})

	t.Run("restart-only settings are verified, never applied", func(t *testing.T) {
		e := connect(t)
		vars, err := Variables(ctx, root, "innodb_doublewrite")
		if err != nil {
			t.Fatal(err)
		}
		cur := vars["innodb_doublewrite"] // ON, as SHOW VARIABLES spells it
		if err := e.VerifyStartup(ctx, []Setting{{"innodb_doublewrite", cur}, {"sync_binlog", "1"}}); err != nil {
			t.Fatalf("equal value refused: %v", err)
		}
		err = e.VerifyStartup(ctx, []Setting{{"innodb_doublewrite", "false"}})
		var rn *RestartNotAllowedError
		if !errors.As(err, &rn) || rn.Name != "innodb_doublewrite" || rn.Current != cur || rn.Wanted != "false" {
			t.Fatalf("got %#v (%v)", rn, err)
		}
		for _, want := range []string{"innodb_doublewrite", cur, "false", addr} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, want)
			}
		}
		// Restart with what the server already has applies the dynamic
		// part and restarts nothing.
		if err := e.Restart(ctx, []Setting{{"innodb_doublewrite", cur}, {"sync_binlog", "5"}}); err != nil {
			t.Fatal(err)
		}
		if got := read(t, "sync_binlog"); got != "5" {
			t.Fatalf("sync_binlog after Restart = %s", got)
		}
		if err := e.Restart(ctx, []Setting{{"innodb_doublewrite", "false"}}); !errors.As(err, &rn) {
			t.Fatalf("Restart needing a real restart: %v", err)
		}
		if s := e.Startup(); len(s) != 2 || s[1].Value != "5" {
			t.Fatalf("startup = %v", s)
		}
	})

	t.Run("wrong password", func(t *testing.T) {
		wrong := "Wr0ng-" + externalPassword
		_, err := ConnectExternal(ctx, ExternalConfig{DSN: "bench:" + wrong + "@tcp(" + addr + ")/"})
		if err == nil {
			t.Fatal("connected with a wrong password")
		}
		if !strings.Contains(err.Error(), "Access denied for user") || !strings.Contains(err.Error(), addr) {
			t.Fatalf("error lacks the server's message or address: %v", err)
		}
		if strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), externalPassword) {
			t.Fatalf("password in error: %v", err)
		}
	})

	t.Run("password from config and environment", func(t *testing.T) {
		bare := "bench@tcp(" + addr + ")/"
		e, err := ConnectExternal(ctx, ExternalConfig{DSN: bare, Password: externalPassword})
		if err != nil {
			t.Fatal(err)
		}
		_ = e.Stop(ctx)
		t.Setenv(catalog.PasswordEnv, externalPassword)
		e, err = ConnectExternal(ctx, ExternalConfig{DSN: bare})
		if err != nil {
			t.Fatal(err)
		}
		_ = e.Stop(ctx)
	})

	t.Run("foreign tables", func(t *testing.T) {
		for _, q := range []string{
			"CREATE DATABASE bmx", "CREATE TABLE bmx.sbtest1 (id INT PRIMARY KEY)",
			"CREATE TABLE bmx.sbtest2 (id INT PRIMARY KEY)", "CREATE TABLE bmx.customers (id INT PRIMARY KEY)",
		} {
			if _, err := root.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		e := connect(t)
		ours := func(t string) bool { return strings.HasPrefix(t, "sbtest") }
		// Tables of the workload's names are someone else's until
		// benchmatrix records that it created them.
		got, err := e.ForeignTables(ctx, "bmx", ours)
		want := []string{"customers", "sbtest1 (not created by benchmatrix)", "sbtest2 (not created by benchmatrix)"}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("foreign = %v, %v", got, err)
		}
		if err := e.Claim(ctx, "bmx", []string{"sbtest1", "sbtest2"}); err != nil {
			t.Fatal(err)
		}
		got, err = e.ForeignTables(ctx, "bmx", ours)
		if err != nil || !slices.Equal(got, []string{"customers"}) {
			t.Fatalf("foreign after Claim = %v, %v", got, err)
		}
		// Dropped and created again by someone else: not ours any more.
		for _, q := range []string{"DROP TABLE bmx.sbtest2", "DO SLEEP(1.1)", "CREATE TABLE bmx.sbtest2 (id INT PRIMARY KEY)"} {
			if _, err := root.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		got, err = e.ForeignTables(ctx, "bmx", ours)
		if err != nil || !slices.Equal(got, []string{"customers", "sbtest2 (not created by benchmatrix)"}) {
			t.Fatalf("foreign after someone recreated sbtest2 = %v, %v", got, err)
		}
		if got, err := e.ForeignTables(ctx, "no_such_schema", ours); err != nil || len(got) != 0 {
			t.Fatalf("missing schema: %v, %v", got, err)
		}
	})
}

func TestExternalUnreachable(t *testing.T) {
	t.Parallel()
	port, err := FreePort() // free now, so nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	start := time.Now()
	_, err = ConnectExternal(context.Background(), ExternalConfig{DSN: "u:pw-unreachable@tcp(" + addr + ")/", ConnectTimeout: 2 * time.Second})
	if err == nil {
		t.Fatal("connected to a closed port")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
	if !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "pw-unreachable") {
		t.Fatalf("error = %v", err)
	}
}

func TestExternalBadDSN(t *testing.T) {
	t.Parallel()
	_, err := ConnectExternal(context.Background(), ExternalConfig{DSN: "u:secretpw@tcp(127.0.0.1:1"})
	if err == nil || strings.Contains(err.Error(), "secretpw") {
		t.Fatalf("error = %v", err)
	}
}

func TestHidePassword(t *testing.T) {
	t.Parallel()
	base := &ReadOnlyError{Name: "x", Err: errors.New("dsn u:hunter2@tcp(h)")}
	err := hidePassword(fmt.Errorf("wrapped: %w", base), "hunter2")
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatal(err)
	}
	var ro *ReadOnlyError
	if !errors.As(err, &ro) {
		t.Fatal("lost the chain")
	}
	if hidePassword(nil, "x") != nil {
		t.Fatal("nil")
	}
}

func TestConfigsHidePasswords(t *testing.T) {
	t.Parallel()
	ec := ExternalConfig{DSN: "u:hunter2@tcp(h:3306)/db", Password: "swordfish"}
	dc := DockerConfig{Image: "x:y", Password: "swordfish"}
	for _, v := range []any{ec, &ec, dc, &dc} {
		for _, f := range []string{"%v", "%+v", "%s"} {
			if s := fmt.Sprintf(f, v); strings.Contains(s, "hunter2") || strings.Contains(s, "swordfish") {
				t.Errorf("%s shows a password: %s", f, s)
			}
		}
		if b, _ := json.Marshal(v); strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "swordfish") {
			t.Errorf("JSON shows a password: %s", b)
		}
	}
	if s := fmt.Sprint(ec); !strings.Contains(s, "h:3306") {
		t.Errorf("address lost: %s", s)
	}
}
