package oltp

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"benchmatrix/sqlconn"
)

// recordConn is a driver connection that sends nothing: it writes down
// every statement, answers a query with no rows and a write with one
// changed row.
type recordConn struct{ log *strings.Builder }

func (r recordConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("recordConn: no prepared statements")
}
func (r recordConn) Close() error              { return nil }
func (r recordConn) Begin() (driver.Tx, error) { return nil, errors.New("recordConn: no transactions") }

func (r recordConn) Exec(q string, _ []driver.Value) (driver.Result, error) {
	fmt.Fprintln(r.log, q)
	return driver.RowsAffected(1), nil
}

func (r recordConn) Query(q string, _ []driver.Value) (driver.Rows, error) {
	fmt.Fprintln(r.log, q)
	return noRows{}, nil
}

type noRows struct{}

func (noRows) Columns() []string         { return []string{"c"} }
func (noRows) Close() error              { return nil }
func (noRows) Next([]driver.Value) error { return io.EOF }

// TestLegacyStatementsGolden pins, without a server, what each legacy
// script run by a 0.5-era command line does: the CREATE TABLE of its
// prepare and the statements of its first events, for the same lines as
// TestLegacyScriptsMatchSysbench checks against the real sysbench (which
// needs sysbench's source tree; this does not). Rewrite with
// go test ./oltp -run TestLegacyStatementsGolden -update-golden
func TestLegacyStatementsGolden(t *testing.T) {
	lines := []string{
		"oltp.lua",
		"oltp.lua --mysql-table-engine=myisam --oltp-range-size=10",
		"oltp.lua --oltp-read-only=on --oltp-skip-trx=on --oltp-point-selects=3",
		"oltp.lua --oltp-write-only=on --oltp-auto-inc=off --oltp-index-updates=2 --oltp-delete-inserts=2",
		"oltp.lua --oltp-read-only --oltp-range-selects=off",
		"oltp.lua --oltp-secondary=off --oltp-create-secondary=off --oltp-range-selects=off",
		"select.lua",
		"oltp_simple.lua",
		"insert.lua",
		"insert.lua --oltp-auto-inc=off",
		"delete.lua",
		"update_index.lua",
		"update_non_index.lua --mysql-table-engine=myisam",
		// The recording connection prepares nothing: text statements.
		"select_random_points.lua --db-ps-mode=disable --random-points=3",
		"select_random_ranges.lua --db-ps-mode=disable --number-of-ranges=2 --random-ranges-delta=7 --num-threads=2",
		"bulk_insert.lua --num-threads=2",
		"parallel_prepare.lua --oltp-table-size=3 --oltp-tables-count=3 --num-threads=2",
		"parallel_prepare.lua --oltp-table-size=2 --oltp-auto-inc=off --oltp-create-secondary=off",
	}
	var out strings.Builder
	for _, line := range lines {
		script, opts, _ := strings.Cut(line, " ")
		args := append([]string{"--test=/src/tests/include/oltp_legacy/" + script,
			"--oltp-table-size=5000", "--oltp-tables-count=2", "--rand-type=uniform", "--num-threads=1", "--rand-seed=7"},
			strings.Fields(opts)...)
		inv, err := ParseCommandLine(append(args, "run"))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		o := inv.Options
		fmt.Fprintf(&out, "## %s (workload %s)\n", line, inv.Workload)
		o.print = &out // what parallel_prepare.lua prints
		fmt.Fprintf(&out, "%s\n", createTableSQL(&o, tableNumbers(&o)[0]))
		dist, err := NewDist(o)
		if err != nil {
			t.Fatal(err)
		}
		sess, err := newSession(env{o: &o, r: NewRand(o.RandSeed, 0), dist: dist, uniq: NewUnique(o.RandSeed)})
		if err != nil {
			t.Fatal(err)
		}
		sc, err := sqlconn.New(recordConn{log: &out})
		if err != nil {
			t.Fatal(err)
		}
		c := &conn{sc}
		if err := sess.init(c); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			fmt.Fprintf(&out, "-- event %d\n", i+1)
			if err := sess.event(c); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
		}
		fmt.Fprintf(&out, "-- done\n")
		if err := sess.done(c); err != nil {
			t.Fatal(err)
		}
		out.WriteString("\n")
	}
	checkGolden(t, "legacy_statements.golden", out.String())
}
