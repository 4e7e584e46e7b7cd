package oltp

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLegacyLoadScriptsMatchSysbench checks the legacy scripts that load
// data in their events, bulk_insert.lua and parallel_prepare.lua, against
// the real sysbench 1.0.20 running them from its source tree, on one
// sandbox: the same lines printed, the same tables (SHOW TABLES, SHOW
// CREATE TABLE, rows), the same statement counters, and for
// parallel_prepare the same shape of INSERT (from the general log).
func TestLegacyLoadScriptsMatchSysbench(t *testing.T) {
	bin := needSysbench(t)
	dir := sysbenchLegacyDir(t)
	sb := startSandbox(t)
	cfg, db := testDB(t, sb, "sbtest")
	ctx := context.Background()

	conn := []string{"--mysql-host=127.0.0.1", "--mysql-port=" + strconv.Itoa(portOf(cfg)),
		"--mysql-user=root", "--mysql-db=" + cfg.DBName}
	type tool func(t *testing.T, args ...string) string
	ours := func(t *testing.T, args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := Main(ctx, append(append([]string{}, conn...), args...), &stdout, &stderr); code != 0 {
			t.Fatalf("benchmatrix oltp %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	theirs := func(t *testing.T, args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, append(append([]string{}, conn...), args...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("sysbench %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	dropAll := func(t *testing.T) {
		t.Helper()
		for i := 0; i <= 4; i++ {
			if _, err := db.Exec(fmt.Sprintf("DROP TABLE IF EXISTS sbtest%d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// (MariaDB 10.11 leaves Innodb_rows_inserted at 0 here.)
	counters := []string{"Com_insert", "Com_create_table", "Com_create_index", "Handler_write"}
	delta := func(t *testing.T, run func()) map[string]int64 {
		before := globalStatus(t, db)
		run()
		after := globalStatus(t, db)
		d := map[string]int64{}
		for _, k := range counters {
			d[k] = after[k] - before[k]
		}
		return d
	}
	// tables is SHOW TABLES, then SHOW CREATE TABLE, rows and id range of
	// each table.
	tables := func(t *testing.T) string {
		t.Helper()
		list := tableList(t, db)
		out := []string{list}
		for _, name := range strings.Fields(strings.TrimPrefix(list, "tables: ")) {
			var n, ddl string
			if err := db.QueryRow("SHOW CREATE TABLE "+name).Scan(&n, &ddl); err != nil {
				t.Fatal(err)
			}
			var cnt, lo, hi sql.NullInt64
			if err := db.QueryRow("SELECT COUNT(*), MIN(id), MAX(id) FROM "+name).Scan(&cnt, &lo, &hi); err != nil {
				t.Fatal(err)
			}
			out = append(out, ddl, fmt.Sprintf("rows %d ids %d..%d", cnt.Int64, lo.Int64, hi.Int64))
		}
		return strings.Join(out, "\n")
	}
	same := func(t *testing.T, what, our, sys string) {
		t.Helper()
		if our != sys {
			t.Errorf("%s differs:\nours:\n%s\nsysbench:\n%s", what, our, sys)
		}
	}
	sameCounters := func(t *testing.T, our, sys map[string]int64) {
		t.Helper()
		for _, k := range counters {
			if _, ok := sys[k]; ok && our[k] != sys[k] {
				t.Errorf("%s: ours %d, sysbench %d", k, our[k], sys[k])
			}
		}
		t.Logf("ours %v\nsysbench %v", our, sys)
	}

	t.Run("bulk_insert", func(t *testing.T) {
		script := "--test=" + filepath.Join(dir, "bulk_insert.lua")
		type side struct {
			prepare, prepared, cleanup, cleaned string
			one, two                            string // tables after each run
			oneDelta, twoDelta                  map[string]int64
			filled                              int64  // tables with rows after two workers' run
			queries                             string // one worker's "queries performed"
		}
		measure := func(tool tool) side {
			var s side
			dropAll(t)
			// One worker, enough rows for several flushes of the
			// 512 KiB buffer: the statement count is exact.
			s.prepare = afterBanner(tool(t, script, "prepare"))
			s.prepared = tables(t)
			s.oneDelta = delta(t, func() { s.queries = queryCounts(tool(t, script, "--max-requests=150000", "run")) })
			s.one = tables(t)
			s.cleanup = afterBanner(tool(t, script, "cleanup"))
			s.cleaned = tableList(t, db)
			// Two workers, one table each; a few rows (one INSERT each at
			// the end).
			tool(t, script, "--num-threads=2", "prepare")
			s.twoDelta = delta(t, func() { tool(t, script, "--num-threads=2", "--max-requests=300", "run") })
			s.two = tableList(t, db)
			for i := 0; i < 2; i++ {
				var n int64
				if err := db.QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM sbtest%d", i)).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n > 0 {
					s.filled++
				}
			}
			tool(t, script, "--num-threads=2", "cleanup")
			return s
		}
		sys, our := measure(theirs), measure(ours)
		same(t, "prepare output", our.prepare, sys.prepare)
		same(t, "prepared tables", our.prepared, sys.prepared)
		same(t, "tables after one worker's run", our.one, sys.one)
		same(t, "one worker's queries performed", our.queries, sys.queries)
		if !strings.Contains(sys.queries, "write: 5") {
			t.Errorf("sysbench's queries performed: %q", sys.queries)
		}
		same(t, "cleanup output", our.cleanup, sys.cleanup)
		same(t, "tables after cleanup", our.cleaned, sys.cleaned)
		same(t, "tables after two workers' run", our.two, sys.two)
		sameCounters(t, our.oneDelta, sys.oneDelta)
		// How the 300 rows fall to the two workers varies (they are
		// quick events, so one may take them all): each worker that has
		// rows flushes them once, at its end.
		for _, s := range []*side{&our, &sys} {
			if s.twoDelta["Com_insert"] != s.filled {
				t.Errorf("two workers filled %d tables with %d INSERTs", s.filled, s.twoDelta["Com_insert"])
			}
			s.twoDelta["Com_insert"] = 0
		}
		sameCounters(t, our.twoDelta, sys.twoDelta)
		if our.oneDelta["Com_insert"] < 3 {
			t.Errorf("one worker's 150000 rows made %d INSERTs: the test wants several flushes", our.oneDelta["Com_insert"])
		}
	})

	t.Run("parallel_prepare", func(t *testing.T) {
		script := "--test=" + filepath.Join(dir, "parallel_prepare.lua")
		// total: the statements of the run (CREATE TABLE, two INSERTs and
		// CREATE INDEX per table).
		cases := []struct {
			name  string
			args  []string
			total string
		}{
			{"defaults", nil, "total: 12"},
			{"no_auto_inc_myisam", []string{"--oltp-auto-inc=off", "--mysql-table-engine=myisam"}, "total: 12"},
			{"secondary_no_index", []string{"--oltp-secondary=on", "--oltp-create-secondary=off"}, "total: 9"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				args := append([]string{script, "--oltp-table-size=4000", "--oltp-tables-count=3", "--rand-type=uniform"}, tc.args...)
				type side struct {
					prepare, prepared, cleanup string
					lines, tables, insert      string
					delta                      map[string]int64
				}
				measure := func(tool tool) side {
					var s side
					dropAll(t)
					// prepare and cleanup are common.lua's.
					s.prepare = afterBanner(tool(t, append(args, "prepare")...))
					s.prepared = tables(t)
					s.cleanup = afterBanner(tool(t, append(args, "cleanup")...))
					// The run loads the tables: worker 0 sbtest1 and
					// sbtest3, worker 1 sbtest2.
					startGeneralLog(t, db)
					var out string
					s.delta = delta(t, func() { out = tool(t, append(args, "--num-threads=2", "--max-requests=2", "run")...) })
					s.insert = insertShape(t, db)
					// The general log's own rows count as Handler_write, and
					// sysbench sends a statement or so more; the rows the
					// run made are compared through the tables.
					delete(s.delta, "Handler_write")
					s.lines = scriptLines(out) + "\n" + queryCounts(out)
					s.tables = tables(t)
					tool(t, append(args, "cleanup")...)
					return s
				}
				sys, our := measure(theirs), measure(ours)
				same(t, "prepare output", our.prepare, sys.prepare)
				same(t, "prepared tables", our.prepared, sys.prepared)
				same(t, "cleanup output", our.cleanup, sys.cleanup)
				same(t, "lines the run printed (sorted), queries performed", our.lines, sys.lines)
				if !strings.Contains(sys.lines, tc.total) {
					t.Errorf("sysbench's lines: %q", sys.lines)
				}
				same(t, "tables the run made", our.tables, sys.tables)
				same(t, "first INSERT into sbtest1 (digits as 9)", our.insert, sys.insert)
				sameCounters(t, our.delta, sys.delta)
			})
		}
	})
}

// afterBanner drops the banner line, which names the tool.
func afterBanner(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "sysbench 1.0.20 (") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// scriptLines are the lines parallel_prepare.lua prints, sorted: the
// workers print them at once (and sysbench's two threads sometimes write
// two of them on one line, so they are found wherever they are).
func scriptLines(out string) string {
	lines := scriptLine.FindAllString(out, -1)
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

var scriptLine = regexp.MustCompile(`thread prepare\d+|Creating table 'sbtest\d+'\.\.\.|Inserting \d+ records into 'sbtest\d+'|Creating secondary indexes on 'sbtest\d+'\.\.\.`)

// queryCounts is the "queries performed" block of a run's summary.
func queryCounts(out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && (f[0] == "read:" || f[0] == "write:" || f[0] == "other:" || f[0] == "total:") {
			lines = append(lines, f[0]+" "+f[1])
		}
	}
	return strings.Join(lines, "\n")
}

var digitRun = regexp.MustCompile(`[0-9]+`)

// insertShape turns the general log off and returns the start of the
// first INSERT into sbtest1 with every run of digits as 9 (how many digits
// k has is random).
func insertShape(t *testing.T, db *sql.DB) string {
	t.Helper()
	if _, err := db.Exec("SET GLOBAL general_log = OFF"); err != nil {
		t.Fatal(err)
	}
	var q string
	err := db.QueryRow("SELECT CONVERT(argument USING utf8mb4) FROM mysql.general_log WHERE command_type = 'Query' AND argument LIKE 'INSERT INTO sbtest1(%' ORDER BY event_time LIMIT 1").Scan(&q)
	if err != nil {
		t.Fatal(err)
	}
	q = digitRun.ReplaceAllString(q, "9")
	return q[:min(len(q), 1200)]
}
