package oltp

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// The server counters compared between sysbench and the engine.
// MariaDB 10.11 has no Innodb_rows_* counters (MySQL has): the handler
// counters carry the same row-level facts there.
var statusCounters = []string{
	"Com_select", "Com_insert", "Com_update", "Com_delete", "Com_begin", "Com_commit",
	"Com_stmt_execute", "Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated",
	"Innodb_rows_deleted", "Handler_write", "Handler_update", "Handler_delete",
	"Handler_read_key", "Handler_read_next", "Rows_read", "Rows_sent",
}

func globalStatus(t *testing.T, db *sql.DB) map[string]int64 {
	t.Helper()
	rows, err := db.Query("SHOW GLOBAL STATUS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			m[k] = n
		}
	}
	return m
}

func statusDelta(before, after map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for _, k := range statusCounters {
		d[k] = after[k] - before[k]
	}
	return d
}

// sysbenchArgs turns engine options into a sysbench command line.
func sysbenchArgs(cfg *mysql.Config, workload string, opts map[string]string, cmd string) []string {
	args := []string{workload, "--db-driver=mysql", "--mysql-host=127.0.0.1",
		"--mysql-port=" + strconv.Itoa(portOf(cfg)), "--mysql-user=root", "--mysql-db=" + cfg.DBName}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--"+strings.ReplaceAll(k, "_", "-")+"="+opts[k])
	}
	return append(args, cmd)
}

func runSysbench(t *testing.T, bin string, args []string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("sysbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func engineOptions(t *testing.T, workload string, opts map[string]string) Options {
	t.Helper()
	o := DefaultOptions()
	o.Workload = workload
	for k, v := range opts {
		if err := o.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// equivalenceCase is one workload and options; tol gives, per counter, the
// relative difference allowed because random draws differ between the two
// runs (every other counter must match exactly).
type equivalenceCase struct {
	name     string
	workload string
	opts     map[string]string
	tol      map[string]float64
}

// readTol allows a relative difference on the counters of rows read and
// sent, which depend on the random draws.
func readTol(f float64, more ...string) map[string]float64 {
	m := map[string]float64{}
	for _, k := range append([]string{"Innodb_rows_read", "Handler_read_next", "Rows_read", "Rows_sent"}, more...) {
		m[k] = f
	}
	return m
}

// rangeTol: range SELECTs that start within range_size of the table's end
// read fewer rows, and which ones do so is random (≈2% of ranges at
// table_size 5000, each up to 99 rows short).
var rangeTol = readTol(0.03)

func TestCountersMatchSysbench(t *testing.T) {
	bin := needSysbench(t)
	sb := startSandbox(t)
	cfg, db := testDB(t, sb, "sbtest")
	ctx := context.Background()
	const events = "200"

	cases := []equivalenceCase{
		{"read_write", "oltp_read_write", nil, rangeTol},
		{"read_write_options", "oltp_read_write", map[string]string{"point_selects": "3", "simple_ranges": "2",
			"sum_ranges": "0", "distinct_ranges": "2", "index_updates": "2", "non_index_updates": "3",
			"delete_inserts": "2", "range_size": "10"}, rangeTol},
		{"read_write_no_ranges_skip_trx", "oltp_read_write", map[string]string{"range_selects": "off", "skip_trx": "on"}, nil},
		{"read_write_text", "oltp_read_write", map[string]string{"db_ps_mode": "disable"}, rangeTol},
		{"read_write_secondary", "oltp_read_write", map[string]string{"secondary": "on", "create_secondary": "off"}, rangeTol},
		{"read_only", "oltp_read_only", nil, rangeTol},
		{"write_only", "oltp_write_only", nil, nil},
		{"point_select", "oltp_point_select", map[string]string{"point_selects": "7"}, nil},
		{"update_index", "oltp_update_index", map[string]string{"index_updates": "3"}, nil},
		{"update_non_index", "oltp_update_non_index", nil, nil},
		// A second DELETE of an id finds nothing: with 200 uniform draws
		// over 2×5000 ids a few repeats are expected, differently per run.
		{"delete", "oltp_delete", nil, readTol(0.05, "Innodb_rows_deleted", "Handler_delete")},
		{"insert", "oltp_insert", nil, nil},
		{"insert_no_auto_inc", "oltp_insert", map[string]string{"auto_inc": "off"}, nil},
		// Rows matched depend on which k values were drawn and how many rows
		// carry each (random at prepare): ~10 rows per event, Poisson-like;
		// an IN list that draws one value twice looks it up once, and
		// overlapping BETWEEN ranges are merged into one index dive.
		{"select_random_points", "select_random_points", map[string]string{"tables": "1"}, readTol(0.15, "Handler_read_key")},
		{"select_random_ranges", "select_random_ranges", map[string]string{"tables": "1", "number_of_ranges": "4", "delta": "7"}, readTol(0.15, "Handler_read_key")},
		{"bulk_insert", "bulk_insert", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := map[string]string{"tables": "2", "table_size": "5000", "rand_type": "uniform", "threads": "1"}
			for k, v := range tc.opts {
				opts[k] = v
			}
			o := engineOptions(t, tc.workload, opts)
			measure := func(run func()) map[string]int64 {
				if err := Cleanup(ctx, cfg, o, nil); err != nil {
					t.Fatal(err)
				}
				if err := Prepare(ctx, cfg, o, nil); err != nil {
					t.Fatal(err)
				}
				before := globalStatus(t, db)
				run()
				return statusDelta(before, globalStatus(t, db))
			}
			runOpts := map[string]string{"events": events, "time": "0"}
			for k, v := range opts {
				runOpts[k] = v
			}
			theirs := measure(func() { runSysbench(t, bin, sysbenchArgs(cfg, tc.workload, runOpts, "run")) })
			ours := measure(func() {
				ro := o
				ro.Events, _ = strconv.ParseInt(events, 10, 64)
				ro.Time = 0
				res, err := Run(ctx, cfg, ro, nil)
				if err != nil {
					t.Fatal(err)
				}
				if res.Events != ro.Events {
					t.Errorf("events = %d, want %d", res.Events, ro.Events)
				}
			})
			for _, k := range statusCounters {
				a, b := ours[k], theirs[k]
				tol := tc.tol[k]
				if a == b {
					continue
				}
				if tol == 0 || math.Abs(float64(a-b)) > tol*math.Max(float64(b), 1) {
					t.Errorf("%s: ours %d, sysbench %d (tolerance %.0f%%)", k, a, b, tol*100)
				}
			}
			t.Logf("ours %v", ours)
			if err := Cleanup(ctx, cfg, o, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The tables prepare makes are sysbench's: same DDL and the same rows
// (ids 1..N, k within 1..N, c and pad digit groups).
func TestPrepareMatchesSysbench(t *testing.T) {
	bin := needSysbench(t)
	sb := startSandbox(t)
	cfg, db := testDB(t, sb, "sbtest")
	ctx := context.Background()
	for _, extra := range []map[string]string{
		nil,
		{"auto_inc": "off"},
		{"secondary": "on", "mysql_storage_engine": "myisam"},
		{"create_secondary": "off"},
		// More threads than tables: ours splits each table's ids over
		// connections; sysbench loads each table on one.
		{"threads": "4", "table_size": "12000"},
	} {
		t.Run(fmt.Sprint(extra), func(t *testing.T) {
			opts := map[string]string{"tables": "2", "table_size": "3000", "threads": "2"}
			for k, v := range extra {
				opts[k] = v
			}
			o := engineOptions(t, "oltp_read_write", opts)
			shape := func() []string {
				var out []string
				for _, n := range []int{1, 2} {
					var name, ddl string
					if err := db.QueryRow(fmt.Sprintf("SHOW CREATE TABLE sbtest%d", n)).Scan(&name, &ddl); err != nil {
						t.Fatal(err)
					}
					// AUTO_INCREMENT=N differs by how ids were assigned only
					// when it is not N+1; keep it, it must match too.
					var cnt, minID, maxID, minK, maxK, badC, badPad int64
					if err := db.QueryRow(fmt.Sprintf(`SELECT COUNT(*), MIN(id), MAX(id), MIN(k), MAX(k),
						SUM(c NOT REGEXP '^([0-9]{11}-){9}[0-9]{11}$'), SUM(pad NOT REGEXP '^([0-9]{11}-){4}[0-9]{11}$')
						FROM sbtest%d`, n)).Scan(&cnt, &minID, &maxID, &minK, &maxK, &badC, &badPad); err != nil {
						t.Fatal(err)
					}
					if minK < 1 || maxK > int64(o.TableSize) || badC != 0 || badPad != 0 {
						t.Errorf("sbtest%d: k %d..%d, %d bad c, %d bad pad", n, minK, maxK, badC, badPad)
					}
					out = append(out, ddl, fmt.Sprint(cnt, minID, maxID))
				}
				return out
			}
			runSysbench(t, bin, sysbenchArgs(cfg, "oltp_read_write", opts, "prepare"))
			theirs := shape()
			if err := Cleanup(ctx, cfg, o, nil); err != nil {
				t.Fatal(err)
			}
			if err := Prepare(ctx, cfg, o, nil); err != nil {
				t.Fatal(err)
			}
			ours := shape()
			if err := Cleanup(ctx, cfg, o, nil); err != nil {
				t.Fatal(err)
			}
			if strings.Join(ours, "\n") != strings.Join(theirs, "\n") {
				t.Fatalf("prepare differs:\nours:\n%s\nsysbench:\n%s", strings.Join(ours, "\n"), strings.Join(theirs, "\n"))
			}
		})
	}
}
