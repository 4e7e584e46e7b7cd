package oltp

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sysbenchLegacyDir is where sysbench 1.0.20's legacy scripts are: the
// tests/include/oltp_legacy directory of its source tree, in the
// yardsticks folder (yardstick: $BENCHMATRIX_YARDSTICKS, else
// ../shared/yardsticks from the repository's root, where CI has it). The
// Debian package does not ship them, and nothing of that tree is
// committed here. The test skips only when the yardsticks folder is
// absent.
func sysbenchLegacyDir(t *testing.T) string {
	t.Helper()
	dir := yardstick(t, "sysbench-1.0.20/tests/include/oltp_legacy")
	if _, err := os.Stat(filepath.Join(dir, "common.lua")); err != nil {
		t.Fatalf("sysbench's legacy scripts are incomplete: %v", err)
	}
	return dir
}

// legacyCounters are the counters compared for the legacy scripts: those
// of the 1.0 comparison, and LOCK/UNLOCK TABLES (oltp.lua on MyISAM).
var legacyCounters = append(append([]string{}, statusCounters...), "Com_lock_tables", "Com_unlock_tables")

// showTables is SHOW CREATE TABLE of sbtest1..n with each table's row
// count and id range.
func showTables(t *testing.T, db *sql.DB, n int) string {
	t.Helper()
	var out []string
	for i := 1; i <= n; i++ {
		var name, ddl string
		if err := db.QueryRow(fmt.Sprintf("SHOW CREATE TABLE sbtest%d", i)).Scan(&name, &ddl); err != nil {
			t.Fatal(err)
		}
		var cnt, minID, maxID sql.NullInt64
		if err := db.QueryRow(fmt.Sprintf("SELECT COUNT(*), MIN(id), MAX(id) FROM sbtest%d", i)).Scan(&cnt, &minID, &maxID); err != nil {
			t.Fatal(err)
		}
		out = append(out, ddl, fmt.Sprintf("rows %d ids %d..%d", cnt.Int64, minID.Int64, maxID.Int64))
	}
	return strings.Join(out, "\n")
}

// tableList is SHOW TABLES: the tables a prepare made.
func tableList(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query("SHOW TABLES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return "tables: " + strings.Join(names, " ")
}

// startGeneralLog empties mysql.general_log and turns the log on.
func startGeneralLog(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, q := range []string{"SET GLOBAL general_log = OFF", "SET GLOBAL log_output = 'TABLE'",
		"TRUNCATE TABLE mysql.general_log", "SET GLOBAL general_log = ON"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// kQuarters turns the general log off and tells which quarters of
// 1..2×size the k values drawn for the statements on sbtest1 fall in
// (the numbers after WHERE, the first of each BETWEEN pair; "01": only
// the table's k values; "0123": also beyond them; 0 counts in the first
// quarter, 2×size and above in the last), then the distinct statements
// prepared on sbtest1 as the server logs them, quoted.
func kQuarters(t *testing.T, db *sql.DB, size int) string {
	t.Helper()
	if _, err := db.Exec("SET GLOBAL general_log = OFF"); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT command_type, CONVERT(argument USING utf8mb4) FROM mysql.general_log WHERE command_type IN ('Execute', 'Query', 'Prepare')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var seen [4]bool
	prepared := map[string]bool{}
	num := regexp.MustCompile(`-?\d+`)
	for rows.Next() {
		var kind, q string
		if err := rows.Scan(&kind, &q); err != nil {
			t.Fatal(err)
		}
		_, where, ok := strings.Cut(q, "WHERE")
		if !ok || !strings.Contains(q, "FROM sbtest1") {
			continue
		}
		if kind == "Prepare" {
			prepared[strconv.Quote(q)] = true
			continue
		}
		step := 1
		if strings.Contains(where, "BETWEEN") {
			step = 2 // v of each "BETWEEN v AND v+delta"
		}
		nums := num.FindAllString(where, -1)
		for i := 0; i < len(nums); i += step {
			v, _ := strconv.Atoi(nums[i])
			seen[min(max((v-1)*4/(2*size), 0), 3)] = true
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for i, ok := range seen {
		if ok {
			out.WriteString(strconv.Itoa(i))
		}
	}
	for _, q := range slices.Sorted(maps.Keys(prepared)) {
		out.WriteString("\n" + q)
	}
	return out.String()
}

var totalEvents = regexp.MustCompile(`total number of events:\s+(\d+)\n`)

// TestLegacyScriptsMatchSysbench runs each legacy script we accept twice
// on one sandbox, with the same 0.5-era command line: by the real sysbench
// 1.0.20 from its source tree, and by `benchmatrix oltp` (Main). prepare
// must make the same tables (SHOW CREATE TABLE, rows, ids) and print the
// same lines after the banner; run must move the server's counters alike.
func TestLegacyScriptsMatchSysbench(t *testing.T) {
	bin := needSysbench(t)
	dir := sysbenchLegacyDir(t)
	sb := startSandbox(t)
	cfg, db := testDB(t, sb, "sbtest")
	ctx := context.Background()
	const tables, events = 2, 200

	deleteTol := readTol(0.05, "Handler_delete")
	// The select_random_* reads depend on the data (how many rows share a
	// k value: a few hundred rows, so a few % of noise on each side);
	// a wrong slice or delta reads twice as many or more.
	pointsTol := readTol(0.25, "Handler_read_key")
	anyReads := readTol(1e9, "Handler_read_key")
	// No --oltp-tables-count: the select_random_* scripts set
	// oltp_tables_count = 1, which that option overrides.
	oneTable := map[string]bool{}
	// Compare which quarters of 0..2×table_size the k values of the run's
	// statements fall in (kQuarters).
	kSlices := map[string]bool{}
	cases := []struct {
		name, script string
		args         []string
		tol          map[string]float64
	}{
		{"oltp", "oltp.lua", nil, rangeTol},
		// prepare stays on one connection, table after table, as the
		// script's prepare() does in sysbench's main thread.
		{"oltp_two_threads", "oltp.lua", []string{"--num-threads=2"}, rangeTol},
		{"oltp_myisam", "oltp.lua", []string{"--mysql-table-engine=myisam", "--oltp-range-size=10"}, rangeTol},
		{"oltp_read_only_skip_trx", "oltp.lua", []string{"--oltp-read-only=on", "--oltp-skip-trx=on", "--oltp-point-selects=3"}, rangeTol},
		{"oltp_write_only_no_auto_inc", "oltp.lua", []string{"--oltp-write-only=on", "--oltp-auto-inc=off", "--oltp-index-updates=2", "--oltp-delete-inserts=2"}, nil},
		// A bare --oltp-read-only is the string "" for the script: off.
		{"oltp_bare_read_only_no_ranges", "oltp.lua", []string{"--oltp-read-only", "--oltp-range-selects=off"}, nil},
		{"oltp_secondary", "oltp.lua", []string{"--oltp-secondary=off", "--oltp-create-secondary=off", "--oltp-range-selects=off"}, nil},
		{"select", "select.lua", nil, nil},
		{"oltp_simple", "oltp_simple.lua", nil, nil},
		{"insert", "insert.lua", nil, nil},
		{"insert_no_auto_inc", "insert.lua", []string{"--oltp-auto-inc=off"}, nil},
		// A second DELETE of an id finds nothing (see TestCountersMatchSysbench).
		{"delete", "delete.lua", nil, deleteTol},
		{"update_index", "update_index.lua", nil, nil},
		{"update_non_index", "update_non_index.lua", []string{"--mysql-table-engine=myisam"}, nil},
		// workload_legacy_random.go. prepare makes the two tables of
		// --oltp-tables-count, the events read sbtest1.
		{"select_random_points", "select_random_points.lua", []string{"--random-points=5"}, pointsTol},
		{"select_random_points_one_table", "select_random_points.lua", nil, pointsTol},
		// num_threads is --num-threads: worker 1's slice is the table's
		// second half.
		{"select_random_points_num_threads", "select_random_points.lua", []string{"--num-threads=2", "--random-points=3"}, pointsTol},
		// --threads leaves num_threads at 1: worker 1 draws k beyond the
		// table's k values and finds (almost) nothing, so how many rows
		// are read depends on how the events fall to the two workers (the
		// faster one takes more): only the k values are compared.
		{"select_random_points_threads", "select_random_points.lua", []string{"--threads=2"}, anyReads},
		{"select_random_ranges", "select_random_ranges.lua", []string{"--number-of-ranges=4", "--random-ranges-delta=7"}, pointsTol},
		// --delta is the 1.0 name: the script does not read it (5).
		{"select_random_ranges_1_0_delta", "select_random_ranges.lua", []string{"--delta=60", "--num-threads=2"}, pointsTol},
		{"select_random_ranges_threads", "select_random_ranges.lua", []string{"--threads=2", "--number-of-ranges=2"}, anyReads},
	}
	for _, n := range []string{"select_random_points_one_table", "select_random_points_num_threads",
		"select_random_points_threads", "select_random_ranges_1_0_delta", "select_random_ranges_threads"} {
		oneTable[n] = true
	}
	for _, n := range []string{"select_random_points_num_threads", "select_random_points_threads",
		"select_random_ranges_1_0_delta", "select_random_ranges_threads"} {
		kSlices[n] = true
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := []string{"--test=" + filepath.Join(dir, tc.script),
				"--oltp-table-size=5000", "--oltp-tables-count=" + strconv.Itoa(tables),
				"--rand-type=uniform", "--num-threads=1",
				"--mysql-host=127.0.0.1", "--mysql-port=" + strconv.Itoa(portOf(cfg)),
				"--mysql-user=root", "--mysql-db=" + cfg.DBName}
			made := tables
			if oneTable[tc.name] {
				base = append(base[:2], base[3:]...)
				made = 1
			}
			base = append(base, tc.args...)
			drop := func() {
				for i := 1; i <= tables; i++ {
					if _, err := db.Exec(fmt.Sprintf("DROP TABLE IF EXISTS sbtest%d", i)); err != nil {
						t.Fatal(err)
					}
				}
			}
			ours := func(args ...string) string {
				var stdout, stderr bytes.Buffer
				if code := Main(ctx, append(append([]string{}, base...), args...), &stdout, &stderr); code != 0 {
					t.Fatalf("benchmatrix oltp %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
				}
				return stdout.String()
			}
			theirs := func(args ...string) string {
				var stdout, stderr bytes.Buffer
				cmd := exec.Command(bin, append(append([]string{}, base...), args...)...)
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("sysbench %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
				}
				return stdout.String()
			}
			type side struct {
				prepare, tables, run, slices string
				delta                        map[string]int64
			}
			measure := func(tool func(args ...string) string) side {
				drop()
				var s side
				s.prepare = tool("prepare")
				s.tables = tableList(t, db) + "\n" + showTables(t, db, made)
				if kSlices[tc.name] {
					startGeneralLog(t, db)
				}
				before := globalStatus(t, db)
				out := tool("--max-requests="+strconv.Itoa(events), "run")
				after := globalStatus(t, db)
				s.run = out
				if kSlices[tc.name] {
					s.slices = kQuarters(t, db, 5000)
				}
				s.delta = map[string]int64{}
				for _, k := range legacyCounters {
					s.delta[k] = after[k] - before[k]
				}
				if m := totalEvents.FindStringSubmatch(out); m == nil || m[1] != strconv.Itoa(events) {
					t.Errorf("run did not report %d events:\n%s", events, out)
				}
				drop()
				return s
			}
			sys := measure(theirs)
			our := measure(ours)
			// The banner line names the tool; what precedes it (sysbench's
			// deprecation warnings) and what follows must match.
			afterBanner := func(s string) string {
				var out []string
				for _, l := range strings.Split(s, "\n") {
					if !strings.HasPrefix(l, "sysbench 1.0.20 (") {
						out = append(out, l)
					}
				}
				return strings.Join(out, "\n")
			}
			if afterBanner(our.prepare) != afterBanner(sys.prepare) {
				t.Errorf("prepare output differs:\nours:\n%s\nsysbench:\n%s", our.prepare, sys.prepare)
			}
			if our.slices != sys.slices {
				t.Errorf("k values fall in other quarters of 1..2×table_size: ours %q, sysbench %q", our.slices, sys.slices)
			}
			if our.tables != sys.tables {
				t.Errorf("prepare made other tables:\nours:\n%s\nsysbench:\n%s", our.tables, sys.tables)
			}
			for _, k := range legacyCounters {
				a, b := our.delta[k], sys.delta[k]
				if a == b {
					continue
				}
				tol := tc.tol[k]
				if kSlices[tc.name] && k == "Handler_write" {
					tol = 1e9 // the general log's own rows
				}
				if tol == 0 || math.Abs(float64(a-b)) > tol*math.Max(float64(b), 1) {
					t.Errorf("%s: ours %d, sysbench %d (tolerance %.0f%%)", k, a, b, tol*100)
				}
			}
			t.Logf("ours %v\nsysbench %v\n%s", our.delta, sys.delta, our.tables)
			if kSlices[tc.name] {
				t.Logf("k quarters: %s", our.slices)
			}
			if t.Failed() {
				t.Logf("our run:\n%s\nsysbench's run:\n%s", our.run, sys.run)
			}
		})
	}
}
