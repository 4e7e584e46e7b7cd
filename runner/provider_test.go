package runner

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/results"
	"benchmatrix/server"
)

func planFrom(t *testing.T, src string) *experiment.Plan {
	t.Helper()
	return planWith(t, src, experiment.Flags{})
}

// planWith resolves manifest text with flags, as run does.
func planWith(t *testing.T, src string, f experiment.Flags) *experiment.Plan {
	t.Helper()
	m, err := experiment.Parse("test.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := experiment.Resolve(m, f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// trackedSandboxes starts sandboxes and keeps the latest in cur, for tests
// that kill or freeze it.
func trackedSandboxes(cur *atomic.Pointer[server.Sandbox]) StartFunc {
	return func(ctx context.Context, spec StartSpec) (server.Server, error) {
		s, err := server.StartSandbox(ctx, server.SandboxConfig{Startup: spec.Startup})
		if err == nil {
			cur.Store(s)
		}
		return s, err
	}
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
	start := trackedSandboxes(&current)
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
	if first.Status != record.CellFailed || !strings.Contains(first.Error, "server died") || first.ServerLog == "" {
		t.Fatalf("first cell: status %s, error %q, log %q", first.Status, first.Error, first.ServerLog)
	}
	if second.Status != record.CellOK || second.Result.Events == 0 {
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
		// The automatic warm-up ended by the settling rule that records
		// the cell's time to a steady state (analysis/steady.go).
		if c.Steady == nil || c.WarmupSteady && (!c.Steady.AutoWarmup || c.Steady.AutoSeconds != c.WarmupSeconds) {
			t.Errorf("%s: steady state %+v (warm-up %.1f s, steady %v)", c.Name, c.Steady, c.WarmupSeconds, c.WarmupSteady)
		}
	}
	if cs := cold.ColdStart; cs == nil || !cs.Restarted || !cs.PageCache || cs.Files == 0 {
		t.Errorf("cold: cold start %+v", cs)
	}
	if warm.ColdStart != nil {
		t.Errorf("warm: cold start %+v", warm.ColdStart)
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

// plan and a real run of the same manifest agree, cell by cell, on what each
// change costs (the flavor read from the sandbox's binary at plan time).
func TestPlanAgreesWithRealRun(t *testing.T) {
	needServer(t)
	m, err := experiment.Parse("agree.toml", `
[experiment]
duration = "1s"
warmup = "0s"
observe = false
repeats = 2
[workload]
name = "oltp_point_select"
table_size = 1000
[scenarios]
a = { innodb_doublewrite = "ON", sync_binlog = 0 }
b = { innodb_doublewrite = "OFF", sync_binlog = 1 }
c = { innodb_doublewrite = "OFF", sync_binlog = 0, workload = "oltp_insert" }
`)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Resolve(context.Background(), m, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Flavor == "" {
		t.Fatal("the sandbox's flavor is not known at plan time")
	}
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	planned, did := []string{}, []string{}
	for i, c := range run.Cells {
		planned = append(planned, plan.Cells[i].Name+":"+plan.Cells[i].Change.Cost())
		did = append(did, c.Name+":"+c.Change.Cost())
	}
	if strings.Join(planned, " ") != strings.Join(did, " ") {
		t.Fatalf("plan and run disagree:\nplan %v\nrun  %v", planned, did)
	}
	if !strings.Contains(strings.Join(did, " "), "restart") || !strings.Contains(strings.Join(did, " "), "reload") {
		t.Fatalf("the matrix exercised no restart or reload: %v", did)
	}
}

// phaseWatch is a Progress that signals when the first cell measures and
// when it ends.
type phaseWatch struct {
	cell      int
	measuring chan struct{}
	done      chan struct{}
	once1     sync.Once
	once2     sync.Once
}

func (p *phaseWatch) Cell(i, n int, c experiment.Cell) { p.cell = i }
func (p *phaseWatch) Phase(text string) {
	if p.cell == 0 && strings.Contains(text, "measure") {
		p.once1.Do(func() { close(p.measuring) })
	}
}
func (p *phaseWatch) CellDone() {
	if p.cell == 0 {
		p.once2.Do(func() { close(p.done) })
	}
}
func (p *phaseWatch) Close() {}

// A server frozen (SIGSTOP) for longer than the window: the cell ends by
// itself within window + grace, with the frozen seconds as zero-throughput
// intervals and a stall; after SIGCONT the run goes on.
func TestFrozenServerCellEnds(t *testing.T) {
	needServer(t)
	plan := planFrom(t, `
[experiment]
duration = "5s"
warmup = "0s"
order = "written"
drain = false
[workload]
name = "oltp_point_select"
table_size = 1000
[axes]
sync_binlog = [0, 1]
`)
	var current atomic.Pointer[server.Sandbox]
	start := trackedSandboxes(&current)
	pw := &phaseWatch{measuring: make(chan struct{}), done: make(chan struct{})}
	var endedWhileFrozen atomic.Bool
	freezer := make(chan struct{})
	go func() {
		defer close(freezer)
		select {
		case <-pw.measuring:
		case <-time.After(2 * time.Minute):
			return
		}
		time.Sleep(1500 * time.Millisecond)
		pid := current.Load().PID()
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Errorf("SIGSTOP: %v", err)
			return
		}
		defer syscall.Kill(pid, syscall.SIGCONT)
		select {
		case <-pw.done:
			endedWhileFrozen.Store(true)
		case <-time.After(2 * time.Minute): // the cell never ended: let it go, and fail below
		}
	}()
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: start, Log: testWriter{t},
		Progress: pw, Grace: 2 * time.Second})
	<-freezer
	if err != nil {
		t.Fatal(err)
	}
	if !endedWhileFrozen.Load() {
		t.Fatal("the frozen cell did not end until the server was thawed")
	}
	first, second := run.Cells[0], run.Cells[1]
	if first.Result == nil || !first.Result.ForcedShutdown {
		t.Fatalf("first cell: %s %s, result %+v", first.Status, first.Error, first.Result)
	}
	zero := 0
	for _, iv := range first.Intervals {
		if iv.Phase == "run" && iv.Events == 0 {
			zero++
		}
	}
	if zero < 2 || first.Stalls == nil || len(first.Stalls.Episodes) == 0 {
		t.Fatalf("first cell: %d zero-throughput intervals, stalls %+v", zero, first.Stalls)
	}
	if second.Status != record.CellOK || second.Result.Events == 0 || second.Result.ForcedShutdown {
		t.Fatalf("second cell after SIGCONT: %s %s", second.Status, second.Error)
	}
}
