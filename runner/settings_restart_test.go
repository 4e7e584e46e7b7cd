package runner

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/record"
	"benchmatrix/server"
)

// A restart after the load phase set the cell's globals must not leave
// the cell measured on the server's defaults. Here the memory limit
// shrinks between the cells, so the limits phase restarts the server
// after SET GLOBAL innodb_flush_log_at_trx_commit = 0; before the fix
// the cell was measured with the default 1 (and recorded 0): on
// tpcc-small-vm.toml, every small-cloud b1e1 ran with sync_binlog = 0.
// The value is read from the server when the runner says it starts the
// warm-up, and read back into the cell.
func TestSettingsHoldOverMemoryRestart(t *testing.T) {
	needServer(t)
	needLimits(t, catalog.LimitSet{Memory: 1 << 30})
	plan := planFrom(t, `
[experiment]
duration = "1s"
warmup = "0s"
order = "written"
[server.config]
innodb_buffer_pool_size = "64M"
[workload]
name = "oltp_point_select"
table_size = 1000
[scenarios]
free = { innodb_flush_log_at_trx_commit = 0, sync_binlog = 1 }
small = { memory = "1G", innodb_flush_log_at_trx_commit = 0, sync_binlog = 1 }
`)
	var current atomic.Pointer[server.Sandbox]
	w := &warmupWatch{t: t, cur: &current}
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: trackedSandboxes(&current), Log: w})
	if err != nil {
		t.Fatal(err)
	}
	log := strings.Join(w.lines(), "\n")
	if !strings.Contains(log, "restart: memory limit shrinks to 1G") {
		t.Fatalf("no restart for the smaller memory limit: the test does not test the case\n%s", log)
	}
	w.mu.Lock()
	seen := append([]string(nil), w.seen...)
	w.mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("read the server %d times at the warm-up, want 2: %v", len(seen), seen)
	}
	for i, c := range run.Cells {
		if c.Status != record.CellOK {
			t.Fatalf("%s: %s %s", c.Name, c.Status, c.Error)
		}
		if seen[i] != "0 1" {
			t.Errorf("%s: measured with innodb_flush_log_at_trx_commit, sync_binlog = %s, want 0 1", c.Name, seen[i])
		}
		if c.Effective["innodb_flush_log_at_trx_commit"] != "0" {
			t.Errorf("%s: recorded %q", c.Name, c.Effective["innodb_flush_log_at_trx_commit"])
		}
	}
	if !run.Cells[1].Restarted {
		t.Error("the small cell does not record its restart")
	}
}

// warmupWatch is a run's log that reads two globals from the current
// sandbox whenever the runner says it starts a cell's warm-up.
type warmupWatch struct {
	t   *testing.T
	cur *atomic.Pointer[server.Sandbox]

	mu   sync.Mutex
	log  []string
	seen []string
}

func (w *warmupWatch) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\n")
	w.t.Log(line)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log = append(w.log, line)
	if strings.HasPrefix(strings.TrimSpace(line), "warm-up ") {
		w.seen = append(w.seen, w.read())
	}
	return len(p), nil
}

func (w *warmupWatch) read() string {
	sb := w.cur.Load()
	if sb == nil {
		return "no server"
	}
	conn, err := mysql.NewConnector(sb.Endpoint())
	if err != nil {
		return err.Error()
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var a, b string
	if err := db.QueryRow("SELECT @@global.innodb_flush_log_at_trx_commit, @@global.sync_binlog").Scan(&a, &b); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%s %s", a, b)
}

func (w *warmupWatch) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.log...)
}

// The snapshot saved after a first load restarts the server: the first
// cell of a data-changing workload with 100,000 rows or more (tpcc-durability's
// b1e1 on a fresh machine) must still be measured with its own settings.
// Before the fix it failed at the read-back before its warm-up
// ("sync_binlog: wanted 1, server has 0").
func TestSettingsHoldOverFirstSnapshot(t *testing.T) {
	needServer(t)
	plan := planFrom(t, `
[experiment]
duration = "1s"
warmup = "0s"
[workload]
name = "oltp_insert"
auto_inc = true
table_size = 100000
[scenarios]
durable = { sync_binlog = 1, innodb_flush_log_at_trx_commit = 0 }
`)
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Start: sandboxStart, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	c := run.Cells[0]
	if c.Data != "loaded" || c.Status != record.CellOK || c.Effective["sync_binlog"] != "1" || c.Effective["innodb_flush_log_at_trx_commit"] != "0" {
		t.Errorf("first cell: data %s, status %s (%s), effective %v", c.Data, c.Status, c.Error, c.Effective)
	}
}
