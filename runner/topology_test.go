package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"benchmatrix/experiment"
	"benchmatrix/results"
	"benchmatrix/server"
	"benchmatrix/topology"
)

func planFromText(t *testing.T, text string) *experiment.Plan {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := experiment.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := experiment.Resolve(m, experiment.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// leftBehind lists this process's sandbox directories (not the golden
// datadir, kept until server.Cleanup) and server processes.
func leftBehind(t *testing.T) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), server.SandboxDirPrefix+strconv.Itoa(os.Getpid())+"-*"))
	var out []string
	for _, d := range dirs {
		if !strings.Contains(d, "-golden-") {
			out = append(out, d)
		}
	}
	return append(out, ourServers(t)...)
}

// A primary and a replica: the user's metrics appear in intervals.csv
// (node-prefixed), the replica killed mid-cell is reported, started again
// after the cell and holds the primary's data; nothing is left behind.
func TestTopologyReplicaKilledMidCell(t *testing.T) {
	needServer(t)
	plan := planFromText(t, `
[experiment]
name = "topology-kill"
duration = "4s"
warmup = "1s"
drain = false

[topology]
kind = "replicas"
replicas = 1

[server.config]
innodb_buffer_pool_size = "32M"

[workload]
name = "oltp_write_only"
tables = 1
table_size = 500
threads = 2

[[observe.metric]]
name = "inserts"
sql = "SHOW GLOBAL STATUS LIKE 'Com_insert'"
kind = "rate"
node = 1

[[observe.metric]]
name = "sessions"
sql = "SELECT COUNT(*) FROM information_schema.PROCESSLIST"
kind = "gauge"

[[events]]
at = "2s"
node = 2
action = "kill"
`)
	dir := t.TempDir()
	run, err := Run(context.Background(), plan, Config{OutDir: dir, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	c := run.Cells[0]
	if c.Status != results.CellOK {
		t.Fatalf("cell %s: %s", c.Status, c.Error)
	}
	top := c.Topology
	if top == nil || len(top.Events) != 1 || top.Events[0].Action != "kill" || top.Events[0].Node != 2 || top.Events[0].Error != "" {
		t.Fatalf("the kill is not reported: %+v", top)
	}
	if len(top.Healed) != 1 || top.Healed[0] != "node2 started again" {
		t.Fatalf("healed %v", top.Healed)
	}
	if n := len(top.Checks); n == 0 || !top.Checks[n-1].Equal || top.Checks[n-1].When != "after the cell" {
		t.Fatalf("checks %+v", top.Checks)
	}
	rows := readCSV(t, filepath.Join(dir, results.IntervalsFile))
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, name := range []string{"node1.inserts", "node1.sessions", "node2.sessions", "node2.seconds_behind", "node2.lag_trx"} {
		if _, ok := col[name]; !ok {
			t.Fatalf("intervals.csv has no %s: %v", name, rows[0])
		}
	}
	if _, ok := col["node2.inserts"]; ok {
		t.Fatal("node2.inserts: the metric names node 1 only")
	}
	inserts, emptyAfterKill := 0.0, false
	for _, r := range rows[1:] {
		if v, err := strconv.ParseFloat(r[col["node1.inserts"]], 64); err == nil {
			inserts += v
		}
		emptyAfterKill = emptyAfterKill || r[col["node2.sessions"]] == ""
	}
	if inserts <= 0 {
		t.Fatal("node1.inserts never moved under an insert load")
	}
	if !emptyAfterKill {
		t.Fatal("node2's columns kept values while it was dead")
	}
	if left := leftBehind(t); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// A user metric the server refuses fails the cell with the server's own
// message.
func TestCustomMetricBadSQLFailsTheCell(t *testing.T) {
	needServer(t)
	plan := planFromText(t, `
[experiment]
name = "bad-metric"
duration = "1s"
warmup = "0s"
drain = false

[workload]
name = "oltp_point_select"
tables = 1
table_size = 100

[[observe.metric]]
name = "missing"
sql = "SELECT v FROM no_such_table"
kind = "gauge"
`)
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Log: testWriter{t}})
	if err == nil {
		t.Fatal("the run succeeded with a metric the server refuses")
	}
	c := run.Cells[0]
	if c.Status != results.CellFailed || !strings.Contains(c.Error, "no_such_table") || !strings.Contains(c.Error, "[[observe.metric]] missing") {
		t.Fatalf("cell %s: %q", c.Status, c.Error)
	}
}

// A Galera cell with writers = "all": inserts arrive on every node (a
// user metric of each node's own Com_insert, which replicated write-sets
// do not count), and every node holds the same data after the cell.
func TestGaleraWritersAllSpreadOverNodes(t *testing.T) {
	needServer(t)
	if err := topology.CheckGalera(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	plan := planFromText(t, `
[experiment]
name = "galera-writers"
duration = "3s"
warmup = "0s"
drain = false

[topology]
kind = "galera"
nodes = 3
writers = "all"

[server.config]
innodb_buffer_pool_size = "32M"

[workload]
name = "oltp_insert"
tables = 1
table_size = 100
threads = 3

[[observe.metric]]
name = "inserts"
sql = "SHOW GLOBAL STATUS LIKE 'Com_insert'"
kind = "rate"
`)
	dir := t.TempDir()
	run, err := Run(context.Background(), plan, Config{OutDir: dir, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	c := run.Cells[0]
	if c.Status != results.CellOK {
		t.Fatalf("cell %s: %s", c.Status, c.Error)
	}
	if n := len(c.Topology.Checks); n == 0 || !c.Topology.Checks[n-1].Equal {
		t.Fatalf("checks %+v", c.Topology.Checks)
	}
	rows := readCSV(t, filepath.Join(dir, results.IntervalsFile))
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, node := range []string{"node1", "node2", "node3"} {
		j, ok := col[node+".inserts"]
		if !ok {
			t.Fatalf("no %s.inserts in %v", node, rows[0])
		}
		sum := 0.0
		for _, r := range rows[1:] {
			if v, err := strconv.ParseFloat(r[j], 64); err == nil {
				sum += v
			}
		}
		if sum <= 0 {
			t.Errorf("%s took no inserts with writers = \"all\"", node)
		}
	}
	if left := leftBehind(t); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}
