package topology

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/observe"
)

// sources are the cluster's nodes for the node sampler.
func sources(t *testing.T, c *Cluster) []observe.NodeSource {
	t.Helper()
	var out []observe.NodeSource
	for i, n := range c.Nodes() {
		out = append(out, observe.NodeSource{Index: i + 1, Name: n.Name, Role: n.Role, DB: nodeDB(t, n), SemiSync: c.Topology().SemiSync})
	}
	for i := range out {
		out[i].Primary = out[0].DB
	}
	return out
}

func column(t *testing.T, s *observe.NodeSampler, rows []observe.Row, name string) []float64 {
	t.Helper()
	for j, c := range s.Columns() {
		if c == name {
			var out []float64
			for _, r := range rows {
				out = append(out, r.Values[j])
			}
			return out
		}
	}
	t.Fatalf("no column %s in %v", name, s.Columns())
	return nil
}

// A replica's lag in transactions rises while its SQL thread is stopped,
// and the SQL thread's column says it is stopped.
func TestReplicaLagRisesWhileSQLThreadStopped(t *testing.T) {
	needServer(t, false)
	c := startCluster(t, experiment.Topology{Kind: catalog.TopologyReplicas, Replicas: 1})
	p := nodeDB(t, c.Nodes()[0])
	mustExec(t, p, "CREATE DATABASE sbtest", "CREATE TABLE sbtest.t (id INT PRIMARY KEY AUTO_INCREMENT, v INT) ENGINE=InnoDB")
	if _, err := c.Verify(context.Background(), "sbtest", []string{"t"}, "before", time.Minute); err != nil {
		t.Fatal(err)
	}
	r := nodeDB(t, c.Nodes()[1])
	mustExec(t, r, "STOP SLAVE SQL_THREAD")
	ctx := context.Background()
	s, err := observe.StartNodes(ctx, sources(t, c), nil)
	if err != nil {
		t.Fatal(err)
	}
	const writes = 40
	for i := 0; i < writes; i++ {
		mustExec(t, p, "INSERT INTO sbtest.t (v) VALUES ("+strconv.Itoa(i)+")")
	}
	time.Sleep(2500 * time.Millisecond)
	rows := s.Stop(2)
	lag := column(t, s, rows, "node2.lag_trx")
	sqlRunning := column(t, s, rows, "node2.sql_running")
	if last := lag[len(lag)-1]; !(last >= writes) {
		t.Fatalf("node2.lag_trx %v, want at least %d with the SQL thread stopped", lag, writes)
	}
	if sqlRunning[len(sqlRunning)-1] != 0 {
		t.Fatalf("node2.sql_running %v, want 0", sqlRunning)
	}
	// Started again, it catches up: the lag is gone.
	mustExec(t, r, "START SLAVE SQL_THREAD")
	ck, err := c.Verify(ctx, "sbtest", []string{"t"}, "after", time.Minute)
	if err != nil || !ck.Equal {
		t.Fatalf("after catching up: %+v %v", ck, err)
	}
	s2, err := observe.StartNodes(ctx, sources(t, c), nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	rows = s2.Stop(1)
	if lag := column(t, s2, rows, "node2.lag_trx"); lag[0] != 0 {
		st, _ := ReplicaStatus(ctx, c.Nodes()[1])
		var pp string
		_ = p.QueryRow("SELECT @@global.gtid_binlog_pos").Scan(&pp)
		t.Logf("primary %s, replica slave pos %s io pos %s", pp, st["Gtid_Slave_Pos"], st["Gtid_IO_Pos"])
		t.Fatalf("lag %v after catching up, want 0", lag)
	}
}

// A Galera node paused (SIGSTOP) for 4 s under a write load, with
// gcs.fc_limit 4: flow control shows in the window around the pause (as
// measured here: in some runs during the pause, in others before it or
// only in the catch-up after it): node 1's paused fraction, from the change
// of wsrep_flow_control_paused_ns, rises above 0 and pause messages are
// sent; every node holds the same data afterwards.
func TestGaleraFlowControlWhileNodePaused(t *testing.T) {
	needServer(t, true)
	c := startCluster(t, experiment.Topology{Kind: catalog.TopologyGalera, Nodes: 3, FCLimit: 4})
	p := nodeDB(t, c.Nodes()[0])
	mustExec(t, p, "CREATE DATABASE sbtest", "CREATE TABLE sbtest.t (id INT PRIMARY KEY AUTO_INCREMENT, v INT) ENGINE=InnoDB")
	if err := c.SetFCLimit(context.Background(), 4); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{}, 4)
	const writers = 4
	for w := 0; w < writers; w++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for ctx.Err() == nil {
				_, _ = p.ExecContext(ctx, "INSERT INTO sbtest.t (v) VALUES (1)")
			}
		}()
	}
	s, err := observe.StartNodes(context.Background(), sources(t, c), nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := c.Do(ctx, experiment.Event{Node: 2, Action: experiment.ActionPause}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	if err := c.Do(ctx, experiment.Event{Node: 2, Action: experiment.ActionResume}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	rows := s.Stop(7)
	cancel()
	for w := 0; w < writers; w++ {
		<-done
	}
	// Flow control around the pause: node2 (or another node) asked the
	// cluster to pause, and node1 spent part of a second paused.
	paused := column(t, s, rows, "node1.wsrep_flow_control_paused")
	peak, sent := 0.0, 0.0
	for _, v := range paused {
		if !math.IsNaN(v) {
			peak = math.Max(peak, v)
		}
	}
	for _, n := range []string{"node1", "node2", "node3"} {
		for _, v := range column(t, s, rows, n+".wsrep_flow_control_sent") {
			if !math.IsNaN(v) {
				sent += v
			}
		}
	}
	if peak <= 0 || sent <= 0 {
		t.Fatalf("node1.wsrep_flow_control_paused %v, flow-control messages sent %v: no flow control around node2's pause", paused, sent)
	}
	ck, err := c.Verify(context.Background(), "sbtest", []string{"t"}, "after", time.Minute)
	if err != nil || !ck.Equal {
		t.Fatalf("after the pause: %+v %v", ck, err)
	}
	t.Logf("node1.wsrep_flow_control_paused per second: %v", paused)
}
