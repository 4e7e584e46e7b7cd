package oltp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/sqlconn"
)

// `WORKLOAD help` is sysbench's text and nothing else, on stdout and on
// stderr (sysbench's own script_oltp_help.t reads both and pins the text
// byte for byte, as TestCLIHelpMatchesSysbench does). With --extras,
// benchmatrix's own options (--reinsert_id, which the AUTO_INCREMENT
// report needs, and --recreate) follow it, for the workloads that read
// them, wherever --extras stands on the line.
func TestHelpListsOwnOptions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		workload string
		want     []string
		not      []string
	}{
		{"oltp_read_write", []string{"--reinsert_id=STRING", "'auto'", "[same]", "--recreate"}, nil},
		{"oltp_write_only", []string{"--reinsert_id=STRING", "--recreate"}, nil},
		{"oltp_point_select", []string{"--recreate"}, []string{"reinsert_id"}},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), []string{c.workload, "help"}, &stdout, &stderr); code != 0 {
			t.Fatal(c.workload, code, stderr.String())
		}
		if stderr.Len() != 0 {
			t.Errorf("%s help: stderr is not empty, as sysbench's is:\n%s", c.workload, stderr.String())
		}
		for _, w := range []string{"reinsert", "recreate", "benchmatrix options"} {
			if strings.Contains(stdout.String(), w) {
				t.Errorf("%s help: stdout has %q: no longer sysbench's", c.workload, w)
			}
		}
		plain := stdout.String()
		for _, line := range [][]string{{c.workload, "help", "--extras"}, {"--extras", c.workload, "help"}} {
			var stdout, stderr bytes.Buffer
			if code := Main(context.Background(), line, &stdout, &stderr); code != 0 {
				t.Fatal(line, code, stderr.String())
			}
			ours, found := strings.CutPrefix(stdout.String(), plain)
			if !found {
				t.Errorf("%q: sysbench's text is not first, unchanged:\n%s", line, stdout.String())
				continue
			}
			if !strings.HasPrefix(ours, "benchmatrix options for "+c.workload+" (not in sysbench):\n") {
				t.Errorf("%q: after sysbench's text:\n%s", line, ours)
			}
			for _, w := range c.want {
				if !strings.Contains(ours, w) {
					t.Errorf("%q lacks %q:\n%s", line, w, ours)
				}
			}
			for _, w := range c.not {
				if strings.Contains(ours, w) {
					t.Errorf("%q lists %q, which %s does not read", line, w, c.workload)
				}
			}
		}
	}
}

// The FATAL lines of a failed statement, for both driver calls.
func TestSysbenchSQLErrorText(t *testing.T) {
	dup := &mysql.MySQLError{Number: 1062, SQLState: [5]byte{'2', '3', '0', '0', '0'}, Message: "Duplicate entry '50' for key 'PRIMARY'"}
	ps := fmt.Errorf("oltp_write_only: worker 2: %w", &sqlconn.StatementError{Err: dup, SQL: "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)", Args: nil, Prepared: true})
	got, ok := sysbenchSQLError(ps, "oltp_write_only")
	want := "mysql_stmt_execute() returned error 1062 (Duplicate entry '50' for key 'PRIMARY') for query 'INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)'\n" +
		"FATAL: `thread_run' function failed: oltp_write_only: worker 2: SQL error, errno = 1062, state = '23000': Duplicate entry '50' for key 'PRIMARY'"
	if !ok || got != want {
		t.Errorf("prepared:\n%s\nwant\n%s", got, want)
	}
	text := &sqlconn.StatementError{Err: dup, SQL: "INSERT INTO sbtest1 (id, k, c, pad) VALUES (50, 1, 'c', 'p')"}
	if got, _ := sysbenchSQLError(text, "oltp_insert"); !strings.HasPrefix(got, "mysql_drv_query() returned error 1062 (Duplicate entry '50' for key 'PRIMARY') for query 'INSERT INTO sbtest1 (id, k, c, pad) VALUES (50, 1, 'c', 'p')'\nFATAL: `thread_run' function failed: oltp_insert: SQL error") {
		t.Errorf("text: %s", got)
	}
	if _, ok := sysbenchSQLError(errors.New("connection refused"), "x"); ok {
		t.Error("an error without a statement took sysbench's statement form")
	}
}

// A duplicate key under `benchmatrix oltp` on a MyISAM table prints
// sysbench's FATAL lines and exits 1, as sysbench does. The same seed
// inserts the same id twice (auto_inc=off): the second run's first
// INSERT is a duplicate.
func TestDuplicateKeyFatalLikeSysbench(t *testing.T) {
	sb := startSandbox(t)
	cfg, _ := testDB(t, sb, "dupkey")
	conn := []string{"--mysql-host=127.0.0.1", "--mysql-port=" + strconv.Itoa(portOf(cfg)), "--mysql-user=" + cfg.User, "--mysql-db=dupkey",
		"--tables=1", "--table-size=10", "--mysql-storage-engine=myisam", "--auto_inc=off"}
	run := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), append(append([]string{}, conn...), args...), &stdout, &stderr)
		return code, stdout.String() + stderr.String()
	}
	if code, out := run("oltp_insert", "prepare"); code != 0 {
		t.Fatal(out)
	}
	if code, out := run("--rand-seed=9", "--events=1", "oltp_insert", "run"); code != 0 {
		t.Fatal(out)
	}
	code, out := run("--rand-seed=9", "--events=1", "oltp_insert", "run")
	line1 := regexp.MustCompile(`(?m)^FATAL: mysql_drv_query\(\) returned error 1062 \(Duplicate entry '-?\d+' for key 'PRIMARY'\) for query 'INSERT INTO sbtest1 \(id, k, c, pad\) VALUES \(-?\d+, \d+, '[\d-]+', '[\d-]+'\)'$`)
	line2 := regexp.MustCompile("(?m)^FATAL: `thread_run' function failed: .*SQL error, errno = 1062, state = '23000': Duplicate entry '-?\\d+' for key 'PRIMARY'$")
	if code != 1 || !line1.MatchString(out) || !line2.MatchString(out) {
		t.Errorf("exit %d, want 1 and sysbench's FATAL lines:\n%s", code, out)
	}
}
