package observe

import (
	"context"
	"database/sql"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/server"
)

// startSandbox starts a real server, or skips when none is installed and CI
// is unset (under CI=true a missing server fails the test).
func startSandbox(t *testing.T, startup []server.Setting) *server.Sandbox {
	t.Helper()
	if _, err := server.FindBinary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install a server: %v", err)
		}
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb, err := server.StartSandbox(ctx, server.SandboxConfig{Startup: startup})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })
	return sb
}

func openPool(t *testing.T, sb *server.Sandbox) *sql.DB {
	t.Helper()
	c, err := mysql.NewConnector(sb.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// A steady insert load, an injected 1 s global lock every 4 s, and the
// sampler beside them: the stall detector must find the injected stalls and
// their period, and the sampler must see commits, fsyncs and the disk.
func TestIntegrationInjectedStallsAreDetected(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t, []server.Setting{{Name: "log_bin", Value: "binlog"}, {Name: "sync_binlog", Value: "1"}})
	ctx := context.Background()
	admin := openPool(t, sb)
	mustExec(t, admin,
		"CREATE DATABASE bench",
		"CREATE TABLE bench.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL, pad CHAR(60) NOT NULL) ENGINE=InnoDB",
		"CREATE TABLE bench.noid (k INT PRIMARY KEY) ENGINE=InnoDB",
		"INSERT INTO bench.t (v, pad) VALUES (1, 'seed'), (2, 'seed')")
	before, err := TableStats(ctx, admin, "bench", []string{"t", "noid"})
	if err != nil {
		t.Fatal(err)
	}
	if before.Rows != 2 || !before.RowsExact || before.MaxID != 2 || before.Tables[1].MaxID != -1 || before.Tables[1].ExactRows != 0 {
		t.Fatalf("before: %+v", before)
	}
	if _, err := TableStats(ctx, admin, "bench", []string{"missing"}); err == nil || !strings.Contains(err.Error(), "no such table") {
		t.Fatalf("missing table: %v", err)
	}

	sdb, err := OpenDB(sb.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	info := sb.Info()
	smp, err := Start(ctx, Config{DB: sdb, Datadir: info.Datadir, ServerPID: sb.PID()}) // flavor detected
	if err != nil {
		t.Fatal(err)
	}

	const seconds = 14
	runCtx, cancel := context.WithTimeout(ctx, seconds*time.Second)
	defer cancel()
	counts := make([]float64, seconds+2)
	inj := &Injector{Every: 4 * time.Second, Hold: time.Second}
	var wg sync.WaitGroup
	var loadErr, injErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		injErr = inj.Run(runCtx, openPool(t, sb))
	}()
	go func() {
		defer wg.Done()
		conn, err := admin.Conn(ctx)
		if err != nil {
			loadErr = err
			return
		}
		defer conn.Close()
		start := time.Now()
		for i := 0; runCtx.Err() == nil; i++ {
			if _, err := conn.ExecContext(runCtx, "INSERT INTO bench.t (v, pad) VALUES (?, 'load')", i); err != nil {
				if runCtx.Err() == nil {
					loadErr = err
				}
				return
			}
			if k := int(time.Since(start) / time.Second); k < len(counts) {
				counts[k]++
			}
		}
	}()
	wg.Wait()
	t0 := time.Now()
	samples := smp.Stop()
	stopTook := time.Since(t0)
	if loadErr != nil || injErr != nil {
		t.Fatalf("load: %v; injector: %v", loadErr, injErr)
	}
	tps := counts[:seconds]
	onsets := inj.Onsets()
	rep := DetectStalls(tps, time.Second, StallOptions{})
	t.Logf("tps %v", tps)
	t.Logf("injected at %v; detected: %s (%+v)", onsets, rep.Text, rep.Episodes)
	if len(onsets) < 3 {
		t.Errorf("injector held %d times in %d s, want 3", len(onsets), seconds)
	}
	if rep.Count < 2 || math.Abs(rep.PeriodSeconds-4) > 1 {
		t.Errorf("want ≥ 2 stalls every 4 ± 1 s, got %q", rep.Text)
	}
	for _, ep := range rep.Episodes {
		near := false
		for _, o := range onsets {
			near = near || math.Abs(float64(ep.Start)-o.Seconds()) <= 1
		}
		if !near {
			t.Errorf("stall at %d s matches no injected onset %v", ep.Start, onsets)
		}
	}

	if stopTook > 1500*time.Millisecond {
		t.Errorf("Stop took %v", stopTook)
	}
	for _, n := range smp.Notes() {
		t.Log("note: ", n)
	}
	if len(samples) < seconds || samples[0].T != 0 {
		t.Fatalf("%d samples, first at %v", len(samples), samples[0].T)
	}
	rows := Rates(samples)
	col := func(name string) []float64 {
		out := make([]float64, len(rows))
		for i, r := range rows {
			out[i] = r.Get(name)
		}
		return out
	}
	for _, name := range Columns() {
		t.Logf("%-22s %v", name, roundAll(col(name)))
	}
	positive := func(name string) {
		t.Helper()
		if m := median(finite(col(name))); !(m > 0) {
			t.Errorf("median %s = %v, want > 0", name, m)
		}
	}
	present := func(name string) {
		t.Helper()
		if n := len(finite(col(name))); n < len(rows)-1 {
			t.Errorf("%s present in %d of %d rows", name, n, len(rows))
		}
	}
	for _, c := range []string{"handler_commits_s", "data_fsyncs_s", "binlog_fsyncs_s", "redo_kb_s", "threads_running",
		"disk_iops", "disk_write_kb_s", "cpu_server_pct", "cpu_client_pct"} {
		positive(c)
	}
	for _, c := range []string{"disk_read_kb_s", "disk_await_ms", "disk_util_pct", "checkpoint_age_kb", "history_list_len",
		"dirty_pages", "cpu_user_pct", "cpu_system_pct", "cpu_iowait_pct", "cpu_steal_pct", "com_commit_s"} {
		present(c)
	}
	if n := len(finite(col("redo_fsyncs_s"))); n != 0 {
		t.Errorf("redo_fsyncs_s has %d values on MariaDB, which does not count them apart", n)
	}
	// Sampled ticks stay on the 1 s grid.
	for i, s := range samples[1 : len(samples)-1] {
		if d := s.T - time.Duration(i+1)*time.Second; d < 0 || d > 250*time.Millisecond {
			t.Errorf("sample %d at %v: off the grid by %v", i+1, s.T, d)
		}
	}
	// Rows are aligned with the load's seconds: both clocks started within
	// milliseconds. A global lock stops the fsyncs with the commits.
	moved := MovedAtOnsets(rows[:min(len(rows), len(tps))], rep.Episodes)
	t.Logf("moved at onsets: %v", moved)
	if !strings.Contains(strings.Join(moved, " "), "data_fsyncs_s ×0.0") {
		t.Errorf("moved at onsets %q lacks the fsync drop", moved)
	}

	after, err := TableStats(ctx, admin, "bench", []string{"t", "noid"})
	if err != nil {
		t.Fatal(err)
	}
	g := Growth(before, after)
	total := 0.0
	for _, c := range counts {
		total += c
	}
	t.Logf("growth %+v (inserts counted %v), after %+v", g, total, after)
	if g.MaxID < int64(total) || g.Rows < int64(total) || g.Bytes < 0 {
		t.Errorf("growth %+v, want ≥ %v new rows and ids", g, total)
	}
}

// The MySQL sources on a MariaDB with performance_schema ON: the P_S
// global_status, SHOW GLOBAL STATUS and P_S binlog queries exist in both, so
// their syntax and parsing are checked against a real server; INNODB_METRICS
// STATUS is MySQL-only and must fail here (MariaDB has ENABLED).
func TestIntegrationMySQLQueriesOnMariaDBPerformanceSchema(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t, []server.Setting{{Name: "performance_schema", Value: "ON"}, {Name: "log_bin", Value: "binlog"}, {Name: "sync_binlog", Value: "1"}})
	if sb.Info().Flavor != server.MariaDB {
		t.Skip("checks the MySQL queries on MariaDB")
	}
	db := openPool(t, sb)
	mustExec(t, db, "CREATE DATABASE b", "CREATE TABLE b.t (id INT AUTO_INCREMENT PRIMARY KEY)")
	for i := 0; i < 20; i++ {
		mustExec(t, db, "INSERT INTO b.t VALUES ()")
	}
	q := dbQuerier(db)
	ctx := context.Background()
	for _, src := range serverSources(server.MySQL) {
		rows, err := q(ctx, src.query)
		vals := map[string]float64{}
		storePairs(vals, src.prefix, rows)
		t.Logf("%s: %v %v", src.name, vals, err)
		switch src.name {
		case "status":
			if err != nil || vals["handler_commit"] < 20 || vals["innodb_data_fsyncs"] <= 0 {
				t.Errorf("status: %v, %v", vals, err)
			}
		case "com_commit":
			if _, ok := vals["com_commit"]; !ok || err != nil {
				t.Errorf("com_commit: %v, %v", vals, err)
			}
		case "binlog_ps":
			if err != nil || vals["ps.binlog_count_misc"] < 20 {
				t.Errorf("binlog fsyncs via P_S: %v, %v", vals, err)
			}
		case "innodb_metrics":
			if err == nil {
				t.Errorf("INNODB_METRICS.STATUS worked on MariaDB: %v", vals)
			}
		}
	}
}

func roundAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Round(x*10) / 10
	}
	return out
}
