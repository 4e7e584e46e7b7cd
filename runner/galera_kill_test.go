package runner

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"benchmatrix/record"
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
		if c.Status != record.CellOK {
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

// A Galera node that dies during a cell with no [[events]] entry (killed
// from outside here, two seconds into the first cell's window) fails that
// cell, naming the node and the signal, which keeps it out of every
// comparison; the node is started again after the cell, and the next cell
// runs on the whole cluster and is ok. (The cell used to report ok at a
// third of the healthy rate, with the node's restart as its only trace.)
func TestGaleraNodeDiesUnplanned(t *testing.T) {
	needGalera(t)
	plan := planFromText(t, `
[experiment]
name = "galera-unplanned"
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
`)
	k := &killMidCell{t: t, node: "node3", after: 2 * time.Second}
	run, err := Run(context.Background(), plan, Config{OutDir: t.TempDir(), Log: testWriter{t}, Progress: k})
	if !errors.Is(err, ErrCellsFailed) {
		t.Fatalf("the run's error %v, want %v", err, ErrCellsFailed)
	}
	if got := k.result(); got != "" {
		t.Fatalf("the outside kill: %s", got)
	}
	if len(run.Cells) != 2 {
		t.Fatalf("%d cells", len(run.Cells))
	}
	first, next := run.Cells[0], run.Cells[1]
	if first.Status != record.CellFailed {
		t.Fatalf("cell %s, whose node3 was killed by nobody's plan: %s %q", first.Name, first.Status, first.Error)
	}
	for _, want := range []string{"node3 died", "killed by signal 9", "not by a planned event"} {
		if !strings.Contains(first.Error, want) {
			t.Fatalf("cell %s: the error does not say %q: %s", first.Name, want, first.Error)
		}
	}
	if top := first.Topology; top == nil || len(top.Events) != 0 {
		t.Fatalf("cell %s: topology %+v", first.Name, first.Topology)
	}
	t.Logf("cell %s: %s; healed %v", first.Name, first.Error, first.Topology.Healed)
	if next.Status != record.CellOK {
		t.Fatalf("the next cell %s: %s %s", next.Name, next.Status, next.Error)
	}
	top := next.Topology
	if top == nil || len(top.Healed) != 0 {
		t.Fatalf("the next cell %s healed something: %+v", next.Name, top)
	}
	if n := len(top.Checks); n == 0 || !top.Checks[n-1].Equal || top.Checks[n-1].When != "after the cell" || !strings.Contains(top.Checks[n-1].Summary, "3 nodes") {
		t.Fatalf("the next cell %s: checks %+v", next.Name, top.Checks)
	}
	if left := leftBehind(t); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// killMidCell is a Progress that SIGKILLs one node's server from outside
// benchmatrix, after the first measured window has run for a while.
type killMidCell struct {
	noProgress
	t     *testing.T
	node  string
	after time.Duration

	once sync.Once
	done chan struct{}
	err  string
}

func (k *killMidCell) Phase(text string) {
	if text != "warm-up and measure" {
		return
	}
	k.once.Do(func() {
		k.done = make(chan struct{})
		go func() {
			defer close(k.done)
			time.Sleep(k.after)
			pid := nodePID(k.t, k.node)
			if pid == 0 {
				k.err = "no process for " + k.node
				return
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				k.err = err.Error()
			}
		}()
	})
}

// result waits for the kill and says what went wrong with it ("" when the
// node was killed).
func (k *killMidCell) result() string {
	if k.done == nil {
		return "the cell never measured"
	}
	<-k.done
	return k.err
}

// nodePID finds this test process's server for a Galera node by its
// wsrep_node_name.
func nodePID(t *testing.T, node string) int {
	t.Helper()
	for _, p := range ourServers(t) {
		pid, cmd, _ := strings.Cut(p, ": ")
		for _, arg := range strings.Fields(cmd) {
			if strings.HasSuffix(arg, "node_name="+node) || strings.HasSuffix(arg, "node-name="+node) {
				n, _ := strconv.Atoi(pid)
				return n
			}
		}
	}
	return 0
}
