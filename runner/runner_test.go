package runner

import (
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/record"
	"benchmatrix/results"
	"benchmatrix/server"
)

func needServer(t *testing.T) {
	t.Helper()
	if _, err := server.FindBinary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install a server: %v", err)
		}
		t.Skip(err)
	}
}

// needLimits skips a test whose limits this machine cannot set (not root,
// a controller missing); under CI as root it fails instead.
func needLimits(t *testing.T, l catalog.LimitSet) {
	t.Helper()
	if err := server.CheckLimitSupport(l); err != nil {
		if os.Getenv("CI") != "" && os.Geteuid() == 0 {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func sandboxStart(ctx context.Context, spec StartSpec) (server.Server, error) {
	return server.StartSandbox(ctx, server.SandboxConfig{Startup: spec.Startup})
}

// ourServers lists server processes whose command line points into a
// sandbox directory of this test process.
func ourServers(t *testing.T) []string {
	t.Helper()
	marker := server.SandboxDirPrefix + strconv.Itoa(os.Getpid()) + "-"
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, marker) {
			found = append(found, e.Name()+": "+cmd)
		}
	}
	return found
}

func loadFlush(t *testing.T) *experiment.Plan {
	t.Helper()
	return loadFlushFor(t, 3*time.Second, time.Second)
}

// loadFlushFor is manifests/flush.toml with --duration d --warmup w.
func loadFlushFor(t *testing.T, d, w time.Duration) *experiment.Plan {
	t.Helper()
	m, err := experiment.Load("../manifests/flush.toml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := experiment.Resolve(m, experiment.Flags{Duration: &d, Warmup: &w, Until: experiment.UntilRepeats, Repeats: 1}) // one round, as flush.toml had before until = "conclusive"
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

func TestFlushMatrixOnSandbox(t *testing.T) {
	needServer(t)
	plan := loadFlush(t)
	dir := t.TempDir()
	run, err := Run(context.Background(), plan, Config{OutDir: dir, Start: sandboxStart, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if left := ourServers(t); len(left) > 0 {
		t.Fatalf("server processes left after the run: %v", left)
	}
	for _, f := range []string{results.RunFile, results.CellsFile, results.IntervalsFile, results.SummaryFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	cells := readCSV(t, filepath.Join(dir, results.CellsFile))
	if len(cells) != 4 {
		t.Fatalf("cells.csv has %d rows, want header + 3", len(cells))
	}
	col := map[string]int{}
	for i, h := range cells[0] {
		col[h] = i
	}
	for _, want := range []string{"cell", "scenario", "sync_binlog", "innodb_flush_log_at_trx_commit", "repeat", "status", "tps", "qps",
		"lat_avg_ms", "lat_p95_ms", "lat_p99_ms", "lat_max_ms", "errors"} {
		if _, ok := col[want]; !ok {
			t.Fatalf("cells.csv lacks column %q: %v", want, cells[0])
		}
	}
	tps := map[string]float64{}
	for _, row := range cells[1:] {
		if row[col["status"]] != "ok" {
			t.Fatalf("cell %s: %s", row[0], row[col["error"]])
		}
		v, _ := strconv.ParseFloat(row[col["tps"]], 64)
		if v <= 0 {
			t.Fatalf("cell %s: tps %v", row[0], v)
		}
		tps[row[col["scenario"]]] = v
	}
	if tps["b0e0"] <= tps["b1e1"] {
		t.Errorf("b0e0 (%.1f tps) is not faster than b1e1 (%.1f tps)", tps["b0e0"], tps["b1e1"])
	}
	ivs := readCSV(t, filepath.Join(dir, results.IntervalsFile))
	phases := map[string]int{}
	for _, row := range ivs[1:] {
		phases[row[3]]++
	}
	if phases["warmup"] == 0 || phases["run"] == 0 {
		t.Fatalf("intervals.csv phases = %v, want warmup and run rows", phases)
	}
	// Effective values are read back and recorded.
	for _, c := range run.Cells {
		if c.Effective["sync_binlog"] != c.Param("sync_binlog") {
			t.Errorf("%s: effective sync_binlog %q, param %q", c.Name, c.Effective["sync_binlog"], c.Param("sync_binlog"))
		}
		if c.Effective["log_bin"] != "ON" {
			t.Errorf("%s: log_bin %q, want ON", c.Name, c.Effective["log_bin"])
		}
	}
	stored, err := results.ReadRun(dir)
	if err != nil || stored.Status != record.StatusFinished || len(stored.Cells) != 3 {
		t.Fatalf("run.json: %v, status %q, %d cells", err, stored.Status, len(stored.Cells))
	}
}

func TestCancelledRunLeavesNoServer(t *testing.T) {
	needServer(t)
	plan := loadFlush(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, plan, Config{OutDir: dir, Start: sandboxStart, Log: testWriter{t}})
		done <- err
	}()
	// Cancel once the first cell is measuring: its warm-up rows exist only
	// in memory, so wait for the sandbox to exist and a little more.
	deadline := time.Now().Add(2 * time.Minute)
	for len(ourServers(t)) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	if left := ourServers(t); len(left) > 0 {
		t.Fatalf("server processes left after a cancelled run: %v", left)
	}
	stored, rerr := results.ReadRun(dir)
	if rerr != nil || stored.Status != record.StatusInterrupted {
		t.Fatalf("run.json after cancel: %v, status %q", rerr, stored.Status)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestResumeAfterInterrupt(t *testing.T) {
	needServer(t)
	plan := loadFlushFor(t, 2*time.Second, 0)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, plan, Config{OutDir: dir, Start: sandboxStart, Log: testWriter{t}})
		done <- err
	}()
	cellsPath := filepath.Join(dir, results.CellsFile)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(cellsPath); err == nil && strings.Count(string(b), "\n") >= 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v", err)
	}
	before, _ := os.ReadFile(cellsPath)
	stored, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Status != record.StatusInterrupted || len(stored.Cells) == 0 || len(stored.Cells) == 3 {
		t.Fatalf("after interrupt: status %s, %d cells", stored.Status, len(stored.Cells))
	}
	// Simulate a crash mid-write: a half row at the end of cells.csv.
	f, _ := os.OpenFile(cellsPath, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("b0e0,b0e0,0,0,1,ok,123")
	f.Close()

	run, err := Run(context.Background(), plan, Config{OutDir: dir, Start: sandboxStart, Log: testWriter{t}, Resume: stored})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(cellsPath)
	if !strings.HasPrefix(string(after), string(before)) {
		t.Fatalf("finished rows changed by the resume:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	rows := readCSV(t, cellsPath)
	if len(rows) != 4 {
		t.Fatalf("cells.csv after resume has %d rows, want header + 3:\n%s", len(rows), after)
	}
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		if seen[r[0]] {
			t.Fatalf("cell %s ran twice", r[0])
		}
		seen[r[0]] = true
	}
	if !run.Cells[0].Started.Equal(stored.Cells[0].Started) {
		t.Fatal("the finished cell was run again")
	}
	if run.Status != record.StatusFinished {
		t.Fatalf("status %s", run.Status)
	}
}
