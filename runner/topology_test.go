package runner

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/record"
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
	if c.Status != record.CellOK {
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
	if c.Status != record.CellFailed || !strings.Contains(c.Error, "no_such_table") || !strings.Contains(c.Error, "[[observe.metric]] missing") {
		t.Fatalf("cell %s: %q", c.Status, c.Error)
	}
}

// A Galera cell with writers = "all": inserts arrive on every node (a
// user metric of each node's own Com_insert, which replicated write-sets
// do not count), and every node holds the same data after the cell.
func TestGaleraWritersAllSpreadOverNodes(t *testing.T) {
	needGalera(t)
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
	if c.Status != record.CellOK {
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

// An existing primary with two replicas, reached with one DSN per node
// (provider external, --dsn three times): every node sampled and its data
// verified, the scenarios' globals set on every node and put back after the
// run, the password nowhere, the servers and the user's tables untouched.
func TestExistingReplicasRun(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	tmp := t.TempDir()
	cl, err := topology.Open(ctx, topology.Config{Topology: experiment.Topology{Kind: catalog.TopologyReplicas, Replicas: 2}, TempDir: tmp,
		Startup: []server.Setting{{Name: "innodb_buffer_pool_size", Value: "32M"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Stop(context.Background()) })
	open := func(n *topology.Node) *sql.DB {
		c, _ := mysql.NewConnector(n.Endpoint())
		db := sql.OpenDB(c)
		t.Cleanup(func() { db.Close() })
		return db
	}
	primary := open(cl.Nodes()[0])
	for _, q := range []string{
		"CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '" + extPassword + "'",
		"GRANT ALL ON *.* TO 'bench'@'127.0.0.1'",
		"CREATE DATABASE shop", "CREATE TABLE shop.orders (id INT PRIMARY KEY)", "INSERT INTO shop.orders VALUES (1)",
	} {
		if _, err := primary.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	var dsns []string
	before := map[string]string{}
	for i, n := range cl.Nodes() {
		db := open(n)
		mustExecRunner(t, db, fmt.Sprintf("SET GLOBAL sync_binlog = %d", 3+i))
		before[n.Name] = global(t, db, "sync_binlog") + "/" + global(t, db, "innodb_flush_log_at_trx_commit") + "/" + global(t, db, "innodb_max_dirty_pages_pct")
		dsns = append(dsns, "bench:"+extPassword+"@tcp("+n.Endpoint().Addr+")/bmtest")
	}
	plan := planWith(t, `
[experiment]
name = "existing-replicas"
duration = "3s"
warmup = "0s"
[server]
provider = "external"
[topology]
kind = "replicas"
replicas = 2
[workload]
name = "oltp_write_only"
tables = 1
table_size = 500
threads = 2
[scenarios]
a = { sync_binlog = 1, innodb_flush_log_at_trx_commit = 1 }
b = { sync_binlog = 0, innodb_flush_log_at_trx_commit = 2 }
`, experiment.Flags{DSNs: dsns})
	dir := t.TempDir()
	var log bytes.Buffer
	run, err := Run(ctx, plan, Config{OutDir: dir, Log: io.MultiWriter(&log, testWriter{t})})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range run.Cells {
		if c.Status != record.CellOK {
			t.Fatalf("cell %s %s: %s", c.Name, c.Status, c.Error)
		}
		if c.Topology == nil || len(c.Topology.Nodes) != 3 {
			t.Fatalf("cell %s: topology %+v", c.Name, c.Topology)
		}
		if n := len(c.Topology.Checks); n == 0 || !c.Topology.Checks[n-1].Equal || c.Topology.Checks[n-1].When != "after the cell" {
			t.Fatalf("cell %s: checks %+v", c.Name, c.Topology.Checks)
		}
	}
	t.Logf("dirty pages before cell b: %d (the drain nudges when over its limit)", run.Cells[1].DirtyPagesAtStart)
	if got := run.Cells[1].Effective["sync_binlog"]; got != "0" {
		t.Fatalf("cell b ran with sync_binlog %q", got)
	}
	rows := readCSV(t, filepath.Join(dir, results.IntervalsFile))
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, name := range []string{"node2.seconds_behind", "node3.lag_trx", "node3.sql_running"} {
		if _, ok := col[name]; !ok {
			t.Fatalf("intervals.csv has no %s: %v", name, rows[0])
		}
	}
	for _, n := range cl.Nodes() {
		db := open(n)
		if got := global(t, db, "sync_binlog") + "/" + global(t, db, "innodb_flush_log_at_trx_commit") + "/" + global(t, db, "innodb_max_dirty_pages_pct"); got != before[n.Name] {
			t.Errorf("%s: sync_binlog/flush_log_at_trx_commit/max_dirty_pages_pct (the drain's nudge) %s after the run, want its own %s back", n.Name, got, before[n.Name])
		}
		var orders int
		if err := db.QueryRow("SELECT COUNT(*) FROM shop.orders").Scan(&orders); err != nil || orders != 1 {
			t.Errorf("%s: the user's table: %d rows (%v)", n.Name, orders, err)
		}
		if !n.Server().(interface{ Alive() bool }).Alive() {
			t.Errorf("%s was stopped", n.Name)
		}
	}
	noPassword(t, log.String(), dir)
}

func mustExecRunner(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// needGalera skips a test without galera-4 (a failure under CI, which
// installs it) and a server to run it on.
func needGalera(t *testing.T) {
	t.Helper()
	needServer(t)
	if err := topology.CheckGalera(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}
