package slap

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/server"
)

func TestMain(m *testing.M) {
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	code := m.Run()
	server.Cleanup()
	os.Exit(code)
}

func startSandbox(t *testing.T) (*server.Sandbox, *sql.DB, []string) {
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
	conn, err := mysql.NewConnector(sb.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	host, port, _ := net.SplitHostPort(sb.Endpoint().Addr)
	return sb, db, []string{"--no-defaults", "-h", host, "-P", port, "-u", "root"}
}

// status is SHOW GLOBAL STATUS's counters that statements move.
func status(t *testing.T, db *sql.DB) map[string]int64 {
	t.Helper()
	// Wait for the tool's connections to be gone, so that what they did
	// is in the global counters.
	for i := 0; i < 100; i++ {
		var k string
		var n int
		if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Threads_connected'").Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		if n <= 1 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	rows, err := db.Query("SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Com\\_%' OR Variable_name IN ('Connections', 'Questions')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

func delta(before, after map[string]int64) map[string]int64 {
	d := map[string]int64{}
	// Questions counts the SHOW GLOBAL STATUS of the measurement itself.
	for k, v := range after {
		n := v - before[k]
		if k == "Questions" {
			n -= after["Com_show_status"] - before["Com_show_status"]
		}
		if n != 0 && k != "Com_show_status" {
			d[k] = n
		}
	}
	return d
}

func fmtCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + strconv.FormatInt(m[k], 10) + " ")
	}
	return b.String()
}

var timingRE = regexp.MustCompile(`[0-9]+\.[0-9]{3}`)

func runMariaDBSlap(t *testing.T, bin string, args []string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb-slap %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func runOurs(t *testing.T, args []string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Main(context.Background(), args, nil, &out, &errb); code != 0 {
		t.Fatalf("benchmatrix slap %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String() + errb.String()
}

// TestSameStatementsAsMariaDBSlap runs each load with Debian's mariadb-slap
// and with benchmatrix slap against one sandbox and compares the server's
// statement counters (SHOW GLOBAL STATUS deltas: every Com_*, Questions,
// Connections), so that the same statements reach the server, the same
// number of times, over the same number of connections.
func TestSameStatementsAsMariaDBSlap(t *testing.T) {
	bin := slapBinary(t)
	_, db, conn := startSandbox(t)
	loads := []struct{ name, args string }{
		{"read", "-a --auto-generate-sql-load-type=read --number-of-queries=200 -c 1,4 --iterations=2 --engine=innodb,myisam"},
		{"write", "-a --auto-generate-sql-load-type=write --number-of-queries=200 -c 1,4 --iterations=2 --engine=innodb,myisam --commit=7"},
		{"update", "-a --auto-generate-sql-load-type=update --number-of-queries=120 -c 3 --iterations=2"},
		{"mixed", "-a --auto-generate-sql-load-type=mixed --number-of-queries=150 -c 1,2 --detach=4"},
		{"key", "-a --auto-generate-sql-load-type=key --auto-generate-sql-add-autoincrement --number-of-queries=100 -c 2 --iterations=3"},
		{"update-key-guid", "-a --auto-generate-sql-load-type=update --auto-generate-sql-guid-primary --auto-generate-sql-secondary-indexes=1 --number-of-queries=60 -c 2"},
		{"query", "--create=CREATE\\ TABLE\\ q(i\\ int);INSERT\\ INTO\\ q\\ VALUES\\ (1),(2) --query=SELECT\\ *\\ FROM\\ q;UPDATE\\ q\\ SET\\ i=i+1 --delimiter=; -c 2 --number-of-queries=40 --pre-query=SELECT\\ 1 --post-query=SELECT\\ 2 --create-schema=slapq"},
	}
	for _, l := range loads {
		args := append(append([]string(nil), conn...), splitArgs(l.args)...)
		before := status(t, db)
		theirOut := runMariaDBSlap(t, bin, args)
		mid := status(t, db)
		ourOut := runOurs(t, args)
		after := status(t, db)
		// The report: the same layout, with the timings masked.
		if a, b := timingRE.ReplaceAllString(theirOut, "N.NNN"), timingRE.ReplaceAllString(ourOut, "N.NNN"); a != b {
			t.Errorf("%s: report differs\n  mariadb-slap:\n%s\n  benchmatrix slap:\n%s", l.name, a, b)
		}
		theirs, ours := delta(before, mid), delta(mid, after)
		if fmtCounts(theirs) != fmtCounts(ours) {
			t.Errorf("%s: counters differ\n  mariadb-slap:     %s\n  benchmatrix slap: %s", l.name, fmtCounts(theirs), fmtCounts(ours))
		} else {
			t.Logf("%s: %s", l.name, fmtCounts(ours))
		}
	}
}

// TestSameTablesAsMariaDBSlap compares SHOW CREATE TABLE of the tables each
// tool creates (kept with --no-drop) for the generated layouts.
func TestSameTablesAsMariaDBSlap(t *testing.T) {
	bin := slapBinary(t)
	_, db, conn := startSandbox(t)
	layouts := []string{
		"-a --number-of-queries=1",
		"-a --auto-generate-sql-add-autoincrement -x 3 -y 2 --engine=myisam --number-of-queries=1",
		"-a --auto-generate-sql-guid-primary --auto-generate-sql-secondary-indexes=2 -x 2:1 -y 3:1 --number-of-queries=1",
		"-a -x 0 -y 4 --engine=memory:max_rows=2300 --number-of-queries=1",
	}
	show := func() (string, int64) {
		var name, ddl string
		if err := db.QueryRow("SHOW CREATE TABLE mysqlslap.t1").Scan(&name, &ddl); err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := db.QueryRow("SELECT COUNT(*) FROM mysqlslap.t1").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("DROP SCHEMA mysqlslap"); err != nil {
			t.Fatal(err)
		}
		return ddl, n
	}
	for _, l := range layouts {
		args := append(append(append([]string(nil), conn...), "--no-drop"), splitArgs(l)...)
		runMariaDBSlap(t, bin, args)
		theirs, theirRows := show()
		runOurs(t, args)
		ours, ourRows := show()
		if theirs != ours || theirRows != ourRows {
			t.Errorf("%s:\n  mariadb-slap:     %s (%d rows)\n  benchmatrix slap: %s (%d rows)", l, theirs, theirRows, ours, ourRows)
		}
	}
}

// TestErrorsLikeMariaDBSlap: a failing statement and a missing schema give
// mariadb-slap's message and exit status.
func TestErrorsLikeMariaDBSlap(t *testing.T) {
	bin := slapBinary(t)
	_, _, conn := startSandbox(t)
	for _, line := range []string{
		"--query=SELECT\\ nosuch\\ FROM\\ nowhere --create-schema=mysql",
		"-a --auto-generate-sql-load-type=read --engine=nosuchengine",
		"--create=CREATE\\ TABLE\\ x(i\\ int) --query=SELECT\\ bad\\ FROM\\ x --create-schema=slaperr",
	} {
		args := append(append([]string(nil), conn...), splitArgs(line)...)
		cmd := exec.Command(bin, args...)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		theirCode := 0
		if ee, ok := err.(*exec.ExitError); ok {
			theirCode = ee.ExitCode()
		}
		var out, errb bytes.Buffer
		ourCode := Main(context.Background(), args, nil, &out, &errb)
		theirs := strings.ReplaceAll(se.String(), bin+": ", "")
		ours := strings.ReplaceAll(errb.String(), "benchmatrix slap: ", "")
		if ourCode != theirCode || theirs != ours {
			t.Errorf("%s:\n  mariadb-slap:     exit %d, %q\n  benchmatrix slap: exit %d, %q", line, theirCode, theirs, ourCode, ours)
		}
	}
}

// TestConnectErrorLikeMariaDBSlap: a client that cannot use its schema
// gives up after ten tries with mariadb-slap's message; the run goes on.
func TestConnectErrorLikeMariaDBSlap(t *testing.T) {
	bin := slapBinary(t)
	_, _, conn := startSandbox(t)
	args := append(append([]string(nil), conn...), "--query=SELECT 1", "--create-schema=nosuchschema", "--csv")
	cmd := exec.Command(bin, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		t.Fatalf("mariadb-slap: %v", err)
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), args, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	theirs := strings.ReplaceAll(se.String(), bin+": ", "")
	ours := strings.ReplaceAll(errb.String(), "benchmatrix slap: ", "")
	if theirs != ours {
		t.Errorf("mariadb-slap: %q, benchmatrix slap: %q", theirs, ours)
	}
	if a, b := timingRE.ReplaceAllString(so.String(), "N"), timingRE.ReplaceAllString(out.String(), "N"); a != b {
		t.Errorf("CSV: mariadb-slap %q, benchmatrix slap %q", a, b)
	}
}
