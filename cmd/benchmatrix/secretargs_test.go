package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/server"
)

// passwordSandbox starts a sandbox with a user whose password is a fresh
// random secret; it returns the host, the port, the user and the secret,
// and a root pool on the server.
func passwordSandbox(t *testing.T) (host, port, user, secret string, db *sql.DB) {
	t.Helper()
	needServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sb, err := server.StartSandbox(ctx, server.SandboxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })
	conn, err := mysql.NewConnector(sb.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	db = sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	secret, user = "Sx"+hex.EncodeToString(b), "bmsecret"
	for _, q := range []string{
		"CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + secret + "'",
		"GRANT ALL ON *.* TO '" + user + "'@'%'",
		"CREATE DATABASE sbtest",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	host, port, _ = net.SplitHostPort(sb.Endpoint().Addr)
	return host, port, user, secret, db
}

// waitForUserQuery waits until the server runs a statement of user whose
// text holds what, that is until the command is well into its work (so
// long after any start-up step).
func waitForUserQuery(t *testing.T, db *sql.DB, cmd *exec.Cmd, exited <-chan struct{}, out *syncBuffer, user, what string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int
		err := db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = ? AND INFO LIKE ?",
			user, "%"+what+"%").Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		gone := false
		select {
		case <-exited: // cmd.Wait returned (ProcessState is Wait's to write)
			gone = true
		default:
		}
		if gone || time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%v never ran %q as %s:\n%s", cmd.Args[1:3], what, user, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assertHidden reads what other processes see of pid (its command line
// and, for the same user, its environment) and fails if secret is there.
func assertHidden(t *testing.T, pid int, secret string) {
	t.Helper()
	for _, f := range []string{"cmdline", "environ"} {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), f))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the password is readable in /proc/%d/%s: %q", pid, f, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if !bytes.Contains(b, []byte("*****")) {
		t.Errorf("/proc/%d/cmdline does not show where the password was: %q", pid, strings.ReplaceAll(string(b), "\x00", " "))
	}
}

// TestPasswordNotInProcCmdline runs benchmatrix slap and oltp with a
// password on the command line against a real server, and reads
// /proc/PID/cmdline and /proc/PID/environ while they run.
func TestPasswordNotInProcCmdline(t *testing.T) {
	host, port, user, secret, db := passwordSandbox(t)
	slapArgs := func(pw ...string) []string {
		a := []string{"slap", "--no-defaults", "-h", host, "-P", port, "-u", user}
		a = append(a, pw...)
		return append(a, "--query=SELECT SLEEP(2)", "--concurrency=1", "--iterations=1", "--create-schema=sbtest")
	}
	oltpArgs := func(pw string, rest ...string) []string {
		a := []string{"oltp", "--mysql-host=" + host, "--mysql-port=" + port, "--mysql-user=" + user, pw,
			"--tables=1", "--table-size=100"}
		return append(a, rest...)
	}
	for _, c := range []struct {
		name  string
		args  []string
		stdin string
		query string // a statement the command runs for a while
		stop  bool   // SIGINT once checked (the command would run on)
		want  string // in its output: it did log in with the password
	}{
		{name: "slap -pSECRET", args: slapArgs("-p" + secret), query: "SLEEP(2)", want: "Average number of seconds"},
		{name: "slap --password=SECRET", args: slapArgs("--password=" + secret), query: "SLEEP(2)", want: "Average number of seconds"},
		{name: "slap --pass=SECRET", args: slapArgs("--pass=" + secret), query: "SLEEP(2)", want: "Average number of seconds"},
		{name: "slap -spSECRET", args: slapArgs("-sp" + secret), query: "SLEEP(2)"},
		// mariadb-slap reads a bare -p's password from the terminal; the
		// word after it (very likely the password meant) is hidden too.
		{name: "slap -p SECRET", args: slapArgs("-p", secret), stdin: secret + "\n", query: "SLEEP(2)", want: "Average number of seconds"},
		{name: "run --dsn user:SECRET@tcp(...)", args: []string{"run", writeManifest(t, strings.Replace(slowManifest, "1000", "100", 1)),
			"--provider", "external", "--dsn", user + ":" + secret + "@tcp(" + net.JoinHostPort(host, port) + ")/sbtest", "-o", filepath.Join(t.TempDir(), "r")},
			query: "sbtest1", stop: true, want: "interrupted"},
		{name: "oltp --mysql-password=SECRET", args: oltpArgs("--mysql-password="+secret, "--time=60", "oltp_point_select", "run"),
			query: "sbtest1", stop: true, want: "Threads started!"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS sbtest.sbtest1") })
			if strings.HasPrefix(c.name, "oltp") {
				prep := exec.Command(binary, oltpArgs("--mysql-password="+secret, "oltp_point_select", "prepare")...)
				if out, err := prep.CombinedOutput(); err != nil {
					t.Fatalf("prepare: %v\n%s", err, out)
				}
			}
			cmd := exec.Command(binary, c.args...)
			var out syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.Stdin = strings.NewReader(c.stdin)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			exited := make(chan struct{})
			go func() { done <- cmd.Wait(); close(exited) }()
			waitForUserQuery(t, db, cmd, exited, &out, user, c.query)
			assertHidden(t, cmd.Process.Pid, secret)
			if c.stop {
				_ = cmd.Process.Signal(syscall.SIGINT)
			}
			select {
			case err := <-done:
				if !c.stop && err != nil {
					t.Fatalf("%v:\n%s", err, out.String())
				}
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				t.Fatalf("did not end:\n%s", out.String())
			}
			if !strings.Contains(out.String(), c.want) {
				t.Errorf("output lacks %q:\n%s", c.want, out.String())
			}
			if strings.Contains(out.String(), secret) {
				t.Errorf("the output shows the password:\n%s", out.String())
			}
		})
	}
}

// TestSecretArgs: which arguments are masked, and how, for each command
// that takes a password (a pure function: the real command lines are run
// by TestPasswordNotInProcCmdline).
func TestSecretArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want map[int]string
	}{
		{[]string{"slap", "-uroot", "-pS3cr"}, map[int]string{2: "-p*****"}},
		{[]string{"slap", "-u", "root", "--password=S3cr", "-P", "3306"}, map[int]string{3: "--password=*****"}},
		{[]string{"slap", "--loose-pass=S3cr", "--pa=S3cr"}, map[int]string{1: "--loose-pass=*****", 2: "--pa=*****"}},
		{[]string{"slap", "-vspS3cr", "-Cp", "S3cr", "--password", "S3cr"}, map[int]string{1: "-vsp*****", 3: "*****", 5: "*****"}},
		// -P (port) and -u take the rest of their argument: no password there.
		{[]string{"slap", "-Pp3306", "-upeter", "--port=1", "--p=x", "-p", "-v", "--", "--password=x"}, map[int]string{}},
		{[]string{"oltp", "--mysql-password=S3cr", "--mysql_password=S3cr", "--mysql-user=u", "--mysql-password="}, map[int]string{1: "--mysql-password=*****", 2: "--mysql_password=*****"}},
		{[]string{"run", "m.toml", "--dsn", "u:S3cr@tcp(h:1)/db", "-dsn=u:p@ss:x@tcp(h:1)/", "--dsn", "u@tcp(h:1)/"},
			map[int]string{3: "u:*****@tcp(h:1)/db", 4: "-dsn=u:*****@tcp(h:1)/"}},
		{[]string{"restore", "u:S3cr@tcp(h:1)/"}, map[int]string{1: "u:*****@tcp(h:1)/"}},
		{[]string{"restore", "u@tcp(h:1)/"}, map[int]string{}},
		{[]string{"plan", "m.toml", "--password=x"}, map[int]string{}},
		// --history takes a URL; a password in it is refused, but only
		// after the arguments are parsed.
		{[]string{"run", "m.toml", "--history=mysql://u:S3cr@h:1/db", "--history", "mysql://u@h:1/db"}, map[int]string{2: "--history=mysql://u:*****@h:1/db"}},
		{[]string{"history", "check", "--history", "mysql://u:S3cr@h:1/db", "--history", "/tmp/h.db"}, map[int]string{3: "mysql://u:*****@h:1/db"}},
	} {
		got := secretArgs(c.args)
		if len(got) != len(c.want) {
			t.Errorf("%q: masked %v, want %v", c.args, got, c.want)
			continue
		}
		for i, w := range c.want {
			if got[i] != w {
				t.Errorf("%q: masked %v, want %v", c.args, got, c.want)
			}
		}
	}
}
