package tpcc

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// tpccLuaDir is the folder holding sysbench-tpcc's tpcc.lua:
// $BENCHMATRIX_TPCC_LUA (the folder, or tpcc.lua itself), else
// sysbench-tpcc/ in the yardsticks folder ($BENCHMATRIX_YARDSTICKS, else
// ../shared/yardsticks from the repository's root, where CI has it).
// Nothing of it is committed here. The test skips, saying where it
// looked, only when no such folder exists; a folder without the scripts
// fails it.
func tpccLuaDir(t testing.TB) string {
	t.Helper()
	p, where := os.Getenv("BENCHMATRIX_TPCC_LUA"), "$BENCHMATRIX_TPCC_LUA"
	if p == "" {
		p, where = yardsticksDir(t)
		p = filepath.Join(p, "sysbench-tpcc")
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			t.Skipf("no sysbench-tpcc at %s (%s): set BENCHMATRIX_TPCC_LUA to a checkout of github.com/Percona-Lab/sysbench-tpcc; TestPrepareRunCheck covers our side without it", p, where)
		}
	}
	if filepath.Base(p) == "tpcc.lua" {
		p = filepath.Dir(p)
	}
	for _, f := range []string{"tpcc.lua", "tpcc_common.lua", "tpcc_run.lua"} {
		if _, err := os.Stat(filepath.Join(p, f)); err != nil {
			t.Fatalf("%s (%s): %v", p, where, err)
		}
	}
	if _, err := exec.LookPath("sysbench"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install sysbench: %v", err)
		}
		t.Skip("sysbench not installed")
	}
	return p
}

// yardsticksDir is $BENCHMATRIX_YARDSTICKS, else ../shared/yardsticks from
// the repository's root (the folder holding go.mod), and how it was found.
func yardsticksDir(t testing.TB) (dir, where string) {
	t.Helper()
	if d := os.Getenv("BENCHMATRIX_YARDSTICKS"); d != "" {
		return d, "$BENCHMATRIX_YARDSTICKS"
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(root)
		if up == root {
			t.Fatal("no go.mod above the test's directory: cannot find the repository's root")
		}
		root = up
	}
	return filepath.Join(filepath.Dir(root), "shared", "yardsticks"), "../shared/yardsticks from the repository's root; BENCHMATRIX_YARDSTICKS and BENCHMATRIX_TPCC_LUA are unset"
}

// probeLua is the test's own sysbench script: sysbench-tpcc's functions,
// one transaction type per event (--only), so that each type's server
// counters are compared alone, without the mix's sampling noise.
const probeLua = `-- benchmatrix test probe: one sysbench-tpcc transaction per event
require("tpcc_common")
require("tpcc_run")
sysbench.cmdline.options.only = {"transaction to run", "new_order"}
function thread_init()
   drv, con = db_connection_init()
end
function event()
   _G[sysbench.opt.only]()
end
function sysbench.hooks.before_restart_event(err)
   con:query("ROLLBACK")
end
`

var tpccCounters = []string{"Com_select", "Com_insert", "Com_update", "Com_delete", "Com_begin", "Com_commit", "Com_rollback",
	"Handler_write", "Handler_update", "Handler_delete", "Handler_read_key", "Handler_read_next", "Handler_read_prev"}

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

func delta(t *testing.T, db *sql.DB, fn func()) map[string]int64 {
	t.Helper()
	before := globalStatus(t, db)
	fn()
	after := globalStatus(t, db)
	d := map[string]int64{}
	for k, v := range after {
		d[k] = v - before[k]
	}
	return d
}

func runSysbench(t testing.TB, dir string, cfg *mysql.Config, script string, args ...string) string {
	t.Helper()
	host, port, _ := strings.Cut(cfg.Addr, ":")
	full := append([]string{script, "--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port,
		"--mysql-user=" + cfg.User, "--mysql-db=" + cfg.DBName}, args...)
	cmd := exec.Command("sysbench", full...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("sysbench %s: %v\n%s", strings.Join(full, " "), err, out.String())
	}
	return out.String()
}

func cliArgs(cfg *mysql.Config, script string, args ...string) []string {
	host, port, _ := strings.Cut(cfg.Addr, ":")
	return append([]string{script, "--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port,
		"--mysql-user=" + cfg.User, "--mysql-db=" + cfg.DBName}, args...)
}

// shape is a report with its figures and the banner line taken out.
func shape(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 0 && strings.HasPrefix(lines[0], "sysbench ") {
		lines = lines[1:]
	}
	s = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`).ReplaceAllString(strings.Join(lines, "\n"), "#")
	return regexp.MustCompile(`[ \t]+`).ReplaceAllString(s, " ") // widths follow the figures
}

func within(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(b), 1)
}

// TestMatchesSysbenchTPCC runs the real sysbench 1.0.20 with
// sysbench-tpcc's scripts and ours against one sandbox, each in its own
// database: prepare (the same tables, row counts, DDL and rows written),
// each transaction type alone (the server's counters per transaction),
// the mixed run through both command lines (the same report layout,
// counters per event), and the consistency conditions after each.
func TestMatchesSysbenchTPCC(t *testing.T) {
	dir := tpccLuaDir(t)
	sb := startSandbox(t)
	theirsCfg, theirs := testDB(t, sb, "sbt")
	oursCfg, ours := testDB(t, sb, "ours")
	ctx := context.Background()
	o := DefaultOptions()
	o.Scale, o.Tables, o.Threads = 1, 1, 2

	// Prepare.
	var theirTime, ourTime time.Duration
	dTheirs := delta(t, theirs, func() {
		start := time.Now()
		runSysbench(t, dir, theirsCfg, "./tpcc.lua", "--threads=2", "--scale=1", "--tables=1", "prepare")
		theirTime = time.Since(start)
	})
	dOurs := delta(t, ours, func() {
		start := time.Now()
		if _, err := Prepare(ctx, oursCfg, o, nil); err != nil {
			t.Fatal(err)
		}
		ourTime = time.Since(start)
	})
	t.Logf("prepare: sysbench-tpcc %.1f s (30 s of it its fixed wait for the tables), ours %.1f s", theirTime.Seconds(), ourTime.Seconds())
	for _, k := range []string{"Com_create_table", "Com_create_index", "Com_alter_table"} {
		if dTheirs[k] != dOurs[k] {
			t.Errorf("prepare %s: ours %d, sysbench-tpcc %d", k, dOurs[k], dTheirs[k])
		}
	}
	// Rows written: the order lines are 5..15 per order in both (30,000
	// orders: a standard deviation of 550 lines in 600,000 rows), so 1%.
	for _, k := range []string{"Handler_write", "Innodb_rows_inserted"} {
		if !within(float64(dOurs[k]), float64(dTheirs[k]), 0.01) {
			t.Errorf("prepare %s: ours %d, sysbench-tpcc %d", k, dOurs[k], dTheirs[k])
		}
	}
	t.Logf("prepare Handler_write: ours %d, sysbench-tpcc %d; Com_insert ours %d, sysbench-tpcc %d (ours splits a warehouse into 31 pieces and inserts new_orders rows itself: a different statement count by design)",
		dOurs["Handler_write"], dTheirs["Handler_write"], dOurs["Com_insert"], dTheirs["Com_insert"]+dTheirs["Com_insert_select"])
	ourDDL, theirDDL := showCreate(t, ours, 1), showCreate(t, theirs, 1)
	for _, k := range tableKinds {
		if ourDDL[k] != theirDDL[k] {
			t.Errorf("SHOW CREATE TABLE %s1:\nours:\n%s\nsysbench-tpcc:\n%s", k, ourDDL[k], theirDDL[k])
		}
		a, b := count(t, ours, "SELECT COUNT(*) FROM "+k+"1"), count(t, theirs, "SELECT COUNT(*) FROM "+k+"1")
		if k == "order_line" {
			if !within(float64(a), float64(b), 0.01) {
				t.Errorf("order_line1: ours %d rows, sysbench-tpcc %d", a, b)
			}
			continue
		}
		if a != b {
			t.Errorf("%s1: ours %d rows, sysbench-tpcc %d", k, a, b)
		}
	}
	consistent := func(when string) {
		t.Helper()
		for name, cfg := range map[string]*mysql.Config{"ours": oursCfg, "sysbench-tpcc": theirsCfg} {
			res, err := Check(ctx, cfg, o)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Passed {
				t.Errorf("%s %s: %v", name, when, res.Failed())
			}
		}
	}
	consistent("after prepare")

	// Each transaction alone, one thread, the same number of events.
	probe := filepath.Join(t.TempDir(), "tpcc_only.lua")
	if err := os.WriteFile(probe, []byte(probeLua), 0o644); err != nil {
		t.Fatal(err)
	}
	const events = 300
	for i, typ := range []Type{NewOrder, Payment, OrderStatus, Delivery, StockLevel} {
		dt := delta(t, theirs, func() {
			out := runSysbench(t, dir, theirsCfg, probe, "--only="+typeLua[typ], "--scale=1", "--tables=1", "--threads=1", "--time=0", fmt.Sprintf("--events=%d", events), "run")
			if !strings.Contains(out, fmt.Sprintf("transactions:                        %d ", events)) {
				t.Errorf("sysbench %s: %s", typ, out)
			}
		})
		do := delta(t, ours, func() {
			oo := o
			oo.Threads, oo.Events, oo.Time = 1, events, 0
			oo.Mix = make([]int, 5)
			oo.Mix[i] = 1
			res, err := Run(ctx, oursCfg, oo, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Sysbench.Events != events {
				t.Errorf("ours %s: %d events", typ, res.Sysbench.Events)
			}
		})
		compareCounters(t, typ.String(), do, dt, events, typeTolerance[typ])
	}
	consistent("after each transaction alone")

	// The mixed run through both command lines: the same report, the
	// counters per event within the mix's sampling noise.
	const mixed = 2000
	var theirOut, ourOut string
	dt := delta(t, theirs, func() {
		theirOut = runSysbench(t, dir, theirsCfg, "./tpcc.lua", "--scale=1", "--tables=1", "--threads=2", "--time=0", fmt.Sprintf("--events=%d", mixed), "run")
	})
	do := delta(t, ours, func() {
		var out, errOut bytes.Buffer
		code := Main(ctx, cliArgs(oursCfg, filepath.Join(dir, "tpcc.lua"), "--scale=1", "--tables=1", "--threads=2", "--time=0", fmt.Sprintf("--events=%d", mixed), "run"), &out, &errOut)
		if code != 0 {
			t.Fatalf("benchmatrix oltp tpcc.lua run: exit %d\n%s\n%s", code, out.String(), errOut.String())
		}
		ourOut = out.String()
		if !strings.Contains(errOut.String(), "NOPM") {
			t.Errorf("no TPC-C block on stderr: %s", errOut.String())
		}
	})
	if shape(ourOut) != shape(theirOut) {
		t.Errorf("the run's report differs in layout:\nours:\n%s\nsysbench-tpcc:\n%s", ourOut, theirOut)
	}
	compareCounters(t, "mixed", do, dt, mixed, mixTolerance)
	consistent("after the mixed run")

	// Cleanup through both command lines.
	runSysbench(t, dir, theirsCfg, "./tpcc.lua", "--tables=1", "cleanup")
	var out bytes.Buffer
	if code := Main(ctx, cliArgs(oursCfg, "tpcc.lua", "--tables=1", "cleanup"), &out, &out); code != 0 {
		t.Fatalf("cleanup: %d %s", code, out.String())
	}
	for _, db := range []string{"sbt", "ours"} {
		if n := count(t, ours, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '"+db+"'"); n != 0 {
			t.Errorf("%s: %d tables left after cleanup", db, n)
		}
	}
}

var typeLua = map[Type]string{NewOrder: "new_order", Payment: "payment", OrderStatus: "orderstatus", Delivery: "delivery", StockLevel: "stocklevel"}

// Tolerances, per counter, relative, per event (10% unless named; a
// negative tolerance: logged, not compared). One transaction type alone
// (300 events) has little noise: 300 New-Orders average 10 lines with a
// standard error of 0.18 (2%). The rows read by the last-name lookups
// (Handler_read_next of Payment and Order-Status) are not compared:
//   - sysbench-tpcc draws NURand's C again on every call, so the names it
//     looks up are spread evenly over the hot ones; here C is fixed per run
//     as the specification says (and differs from the load's by 65..119),
//     so each run looks up its own few hot names, and how many customers
//     share them varies from run to run: ours measured 4.12, 4.05 and 2.06
//     rows per Payment in three runs against sysbench-tpcc's 3.62, 4.00
//     and 3.59; 12.19 and 18.95 per Order-Status against 14.64 and 14.82.
//   - sysbench-tpcc's Order-Status reads the lines of order number d_id (a
//     slip in its format arguments): ten fixed orders per district.
//
// The lookups themselves are compared: Com_select (a count and a
// SELECT per lookup by name) and Handler_read_key, at 10%.
//
// The mix (2,000 events of two threads) adds the draw of the types:
// Delivery and Stock-Level are 1/23 each, 87 +- 9 events, so the counters
// only they move (Com_delete, Handler_delete: 3 standard deviations =
// 32%) and those they dominate (Handler_read_next, _prev) get 35%.
// Handler_read_key is a third Stock-Level's (about 200 lookups an event,
// 87 +- 9 events: 3 standard deviations are 10% of the whole in one run,
// 14% between two), so 25% (a fresh-clone run of the whole suite saw
// 13%: ours 28.3, sysbench-tpcc 32.6 an event); the rest, driven by
// New-Order and Payment (870 +- 22 each), 10%.
var (
	typeTolerance = map[Type]map[string]float64{
		OrderStatus: {"Handler_read_next": -1},
		Payment:     {"Handler_read_next": -1},
	}
	mixTolerance = map[string]float64{"Com_delete": 0.35, "Handler_delete": 0.35, "Handler_read_next": 0.35, "Handler_read_prev": 0.50, "Handler_read_key": 0.25}
	defaultTol   = 0.10
)

func compareCounters(t *testing.T, what string, ours, theirs map[string]int64, events int, tol map[string]float64) {
	t.Helper()
	var row []string
	for _, k := range tpccCounters {
		a, b := float64(ours[k])/float64(events), float64(theirs[k])/float64(events)
		row = append(row, fmt.Sprintf("%s %.2f/%.2f", strings.TrimPrefix(k, "Com_"), a, b))
		tl, ok := tol[k]
		if !ok {
			tl = defaultTol
		}
		if tl >= 0 && !within(a, b, tl) {
			t.Errorf("%s: %s per event: ours %.3f, sysbench-tpcc %.3f (tolerance %.0f%%)", what, k, a, b, tl*100)
		}
	}
	t.Logf("%s, per event ours/sysbench-tpcc: %s", what, strings.Join(row, ", "))
}
