package runner

import (
	"context"
	"strings"
	"testing"

	"benchmatrix/results"
)

// A Galera node killed mid-cell by a planned event is started again after
// the cell and rejoins by rsync state transfer, although the node (run as
// root) left files in its datadir that its joiner's rsync daemon (which
// drops to nobody) must overwrite; the next cell runs on a healthy cluster
// of three nodes holding the same data; nothing is left behind.
func TestGaleraNodeKilledMidCell(t *testing.T) {
	needGalera(t)
	plan := planFromText(t, `
[experiment]
name = "galera-kill"
duration = "5s"
warmup = "0s"
drain = false
order = "written"

[topology]
kind = "galera"
nodes = 3

[server.config]
innodb_buffer_pool_size = "32M"

[workload]
name = "oltp_write_only"
tables = 1
table_size = 500
threads = 2

[axes]
sync_binlog = [0, 1]

[[events]]
at = "2s"
node = 3
action = "kill"
`)
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Cells) != 2 {
		t.Fatalf("%d cells", len(run.Cells))
	}
	for i, c := range run.Cells {
		if c.Status != results.CellOK {
			t.Fatalf("cell %d (%s): %s %s", i+1, c.Name, c.Status, c.Error)
		}
		top := c.Topology
		if top == nil || len(top.Events) != 1 || top.Events[0].Error != "" {
			t.Fatalf("cell %s: the kill is not reported: %+v", c.Name, top)
		}
		if len(top.Healed) != 1 || top.Healed[0] != "node3 started again" {
			t.Fatalf("cell %s: healed %v", c.Name, top.Healed)
		}
		if n := len(top.Checks); n == 0 || !top.Checks[n-1].Equal || top.Checks[n-1].When != "after the cell" || !strings.Contains(top.Checks[n-1].Summary, "3 nodes") {
			t.Fatalf("cell %s: checks %+v", c.Name, top.Checks)
		}
	}
	if left := leftBehind(t); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}
