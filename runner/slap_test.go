package runner

import (
	"context"
	"path/filepath"
	"testing"

	"benchmatrix/experiment"
	"benchmatrix/record"
)

// TestSlapCells runs a slap manifest on a real sandbox: the cells run on
// the slap adapter, every query is an event (queries per client x clients
// x iterations), the flush policy is applied per scenario, and an engine
// workload in the same run still runs on the engine.
func TestSlapCells(t *testing.T) {
	needServer(t)
	m, err := experiment.Parse("slap.toml", `[experiment]
duration = "1m"
warmup = "0s"
[workload]
name = "slap"
number_of_queries = 300
iterations = 2
[scenarios]
trx1 = { innodb_flush_log_at_trx_commit = 1 }
trx2 = { innodb_flush_log_at_trx_commit = 2 }
[axes]
load_type = ["read", "update"]
concurrency = [1, 3]
`)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := experiment.Resolve(m, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	run, err := Run(context.Background(), plan, Config{OutDir: dir, Start: sandboxStart, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Cells) != 8 {
		t.Fatalf("%d cells", len(run.Cells))
	}
	for _, c := range run.Cells {
		if c.Status != record.CellOK || c.Result == nil {
			t.Fatalf("cell %s: %s %s", c.Name, c.Status, c.Error)
		}
		clients := int64(c.Workload.Common().Threads)
		want := 300 / clients * clients * 2
		if c.Result.Events != want || c.Result.Queries() != want {
			t.Errorf("cell %s: %d events, %d queries; want %d", c.Name, c.Result.Events, c.Result.Queries(), want)
		}
		if len(c.Intervals) == 0 {
			t.Errorf("cell %s: no intervals", c.Name)
		}
		if got := c.Effective["innodb_flush_log_at_trx_commit"]; got != map[string]string{"trx1": "1", "trx2": "2"}[c.Scenario] {
			t.Errorf("cell %s: innodb_flush_log_at_trx_commit = %q", c.Name, got)
		}
	}
	if left := ourServers(t); len(left) > 0 {
		t.Errorf("servers left behind: %v", left)
	}
}
