package runner

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/experiment"
	"benchmatrix/results"
	"benchmatrix/server"
)

func planFrom(t *testing.T, src string) *experiment.Plan {
	t.Helper()
	m, err := experiment.Parse("test.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := experiment.Expand(m)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A data-changing workload over 4 cells that differ only in a dynamic
// variable loads its rows once and restores the snapshot three times.
func TestSnapshotLoadsOnce(t *testing.T) {
	needServer(t)
	plan := planFrom(t, `
[experiment]
duration = "1s"
warmup = "0s"
repeats = 2
[workload]
name = "oltp_insert"
auto_inc = true
table_size = 100000
[axes]
sync_binlog = [0, 1]
`)
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: sandboxStart, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	var how []string
	for _, c := range run.Cells {
		how = append(how, c.Data)
	}
	if got := strings.Join(how, " "); got != "loaded restored restored restored" {
		t.Fatalf("data per cell: %s", got)
	}
}

// A restart-only axis restarts the server; a dynamic one does not.
func TestRestartOnlyWhenNeeded(t *testing.T) {
	needServer(t)
	plan := planFrom(t, `
[experiment]
duration = "1s"
warmup = "0s"
order = "written"
[workload]
name = "oltp_point_select"
table_size = 1000
[axes]
performance_schema = ["OFF", "ON"]
sync_binlog = [0, 1]
`)
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: sandboxStart, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	var restarts []string
	for _, c := range run.Cells {
		restarts = append(restarts, c.Name+"="+map[bool]string{true: "restart", false: "-"}[c.Restarted])
		if c.Effective["performance_schema"] != c.Param("performance_schema") {
			t.Errorf("%s: performance_schema is %q", c.Name, c.Effective["performance_schema"])
		}
		if c.Data != "reused" && c.Index > 0 {
			t.Errorf("%s: data %s, want reused (same shape, read-only workload)", c.Name, c.Data)
		}
	}
	want := "performance_schema=OFF/sync_binlog=0=- performance_schema=OFF/sync_binlog=1=- " +
		"performance_schema=ON/sync_binlog=0=restart performance_schema=ON/sync_binlog=1=-"
	if got := strings.Join(restarts, " "); got != want {
		t.Fatalf("restarts:\n got %s\nwant %s", got, want)
	}
}

// Killing the server mid-cell fails that cell with its error log, and the
// next cell runs on a recovered server.
func TestServerKilledMidCell(t *testing.T) {
	needServer(t)
	plan := planFrom(t, `
[experiment]
duration = "4s"
warmup = "0s"
order = "written"
[workload]
name = "oltp_point_select"
table_size = 1000
[axes]
sync_binlog = [0, 1]
`)
	var current atomic.Pointer[server.Sandbox]
	start := func(ctx context.Context, spec StartSpec) (server.Server, error) {
		s, err := server.StartSandbox(ctx, server.SandboxConfig{Startup: spec.Startup})
		if err == nil {
			current.Store(s)
		}
		return s, err
	}
	go func() {
		// Kill the server once the first cell measures.
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if sb := current.Load(); sb != nil && sb.Alive() && measuring(sb) {
				time.Sleep(time.Second)
				sb.Kill9()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: start, Log: testWriter{t}})
	if err == nil {
		t.Fatal("want an error for the failed cell")
	}
	if len(run.Cells) != 2 {
		t.Fatalf("%d cells", len(run.Cells))
	}
	first, second := run.Cells[0], run.Cells[1]
	if first.Status != results.CellFailed || !strings.Contains(first.Error, "server died") || first.ServerLog == "" {
		t.Fatalf("first cell: status %s, error %q, log %q", first.Status, first.Error, first.ServerLog)
	}
	if second.Status != results.CellOK || second.Result.Events == 0 {
		t.Fatalf("second cell: %s %s", second.Status, second.Error)
	}
}

// measuring reports whether the workload's table exists, i.e. the first
// cell is past prepare.
func measuring(sb *server.Sandbox) bool {
	cfg := sb.Endpoint()
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return false
	}
	db := sql.OpenDB(c)
	defer db.Close()
	var n int
	err = db.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='sbtest' AND TABLE_NAME='sbtest1'").Scan(&n)
	return err == nil && n == 1
}

// warmup = "auto" runs until steady (or the cap), prewarm runs before it,
// a cold cell restarts the server first, and the drain is recorded.
func TestWarmupPolicies(t *testing.T) {
	needServer(t)
	plan := planFrom(t, `
[experiment]
duration = "2s"
warmup = "auto"
warmup_cap = "20s"
prewarm = true
order = "written"
[workload]
name = "oltp_point_select"
table_size = 10000
[axes]
cold = [false, true]
`)
	dir := t.TempDir()
	run, err := Run(context.Background(), plan, Config{OutDir: dir, Start: sandboxStart, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	warm, cold := run.Cells[0], run.Cells[1]
	if warm.Restarted || !cold.Restarted {
		t.Fatalf("restarts: warm %v, cold %v", warm.Restarted, cold.Restarted)
	}
	for _, c := range run.Cells {
		if c.WarmupSeconds <= 0 || c.WarmupSeconds > 21 {
			t.Errorf("%s: warm-up %.1fs", c.Name, c.WarmupSeconds)
		}
		if c.PrewarmSeconds <= 0 {
			t.Errorf("%s: no prewarm recorded", c.Name)
		}
		var warmups, runs int
		for _, iv := range c.Intervals {
			if iv.Phase == "warmup" {
				warmups++
			} else {
				runs++
			}
		}
		if warmups < SteadyWindow || runs == 0 {
			t.Errorf("%s: %d warm-up and %d measured intervals", c.Name, warmups, runs)
		}
	}
	ivs := readCSV(t, dir+"/"+results.IntervalsFile)
	last := -1.0
	for _, row := range ivs[1:] {
		if row[0] != warm.Name {
			continue
		}
		v, _ := strconv.ParseFloat(row[2], 64)
		if v <= last {
			t.Fatalf("interval times go backwards at %v after %v", v, last)
		}
		last = v
	}
}
