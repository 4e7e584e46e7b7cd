package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"

	"benchmatrix/record"
	"benchmatrix/results"
)

// ourDocker lists this process's containers and networks (owner label).
func ourDocker(t *testing.T) []string {
	t.Helper()
	pool, err := dockertest.NewPool("")
	if err != nil {
		t.Fatal(err)
	}
	label := "benchmatrix.owner-pid=" + strconv.Itoa(os.Getpid())
	var out []string
	cs, err := pool.Client.ListContainers(dc.ListContainersOptions{All: true, Filters: map[string][]string{"label": {label}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		out = append(out, "container "+c.ID)
	}
	ns, err := pool.Client.FilteredListNetworks(dc.NetworkFilterOpts{"label": {label: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		out = append(out, "network "+n.Name)
	}
	return out
}

// A primary and a replica in containers, the replica cut off its private
// network mid-cell and put back: both events are reported without error,
// node2.answered shows the cut, the data is equal after the cell, and no
// container or network is left.
func TestDockerTopologyDisconnectMidCell(t *testing.T) {
	needDockerImage(t)
	plan := planFromText(t, `
[experiment]
name = "docker-topology"
duration = "5s"
warmup = "1s"
drain = false

[server]
provider = "docker"

[server.config]
innodb_buffer_pool_size = "32M"

[topology]
kind = "replicas"
replicas = 1

[workload]
name = "oltp_write_only"
tables = 1
table_size = 500
threads = 2

[[events]]
at = "2s"
node = 2
action = "disconnect"

[[events]]
at = "4s"
node = 2
action = "reconnect"
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
	if top == nil || len(top.Events) != 2 || top.Events[0].Action != "disconnect" || top.Events[1].Action != "reconnect" ||
		top.Events[0].Error != "" || top.Events[1].Error != "" {
		t.Fatalf("events: %+v", top)
	}
	if n := len(top.Checks); n == 0 || !top.Checks[n-1].Equal || top.Checks[n-1].When != "after the cell" {
		t.Fatalf("checks %+v", top.Checks)
	}
	rows := readCSV(t, filepath.Join(dir, results.IntervalsFile))
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, name := range []string{"node2.answered", "node2.lag_trx", "node2.seconds_behind"} {
		if _, ok := col[name]; !ok {
			t.Fatalf("intervals.csv has no %s: %v", name, rows[0])
		}
	}
	cut := false
	var answered []string
	for _, r := range rows[1:] {
		answered = append(answered, r[col["node2.answered"]])
		cut = cut || r[col["node2.answered"]] == "0"
	}
	if !cut {
		t.Fatalf("node2.answered %v: never 0 while node2 was cut off", answered)
	}
	t.Logf("node2.answered per second: %v", answered)
	if left := ourDocker(t); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}
