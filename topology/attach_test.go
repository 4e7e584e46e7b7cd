package topology

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchmatrix/exitcode"
	"benchmatrix/experiment"
	"benchmatrix/server"
)

// dsns are the DSNs of a started cluster's nodes, as a user of an existing
// topology would give them.
func dsns(c *Cluster, db string) []string {
	var out []string
	for _, n := range c.Nodes() {
		cfg := n.Endpoint()
		cfg.DBName = db
		out = append(out, cfg.FormatDSN())
	}
	return out
}

// An existing topology that is not the declared one is the user's input to
// correct, found before anything ran: exit code 2, also through the
// runner's wrapping. Anything else Attach meets keeps exit code 1, and so
// does a mismatch Heal finds between cells (not classed by Attach).
func TestAttachMismatchIsInputError(t *testing.T) {
	t.Parallel()
	semi := mismatchf("node1 (127.0.0.1:3306): rpl_semi_sync_master_enabled is OFF, and the manifest says semi_sync = true: benchmatrix does not change how someone else's servers replicate; say semi_sync = false")
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"semi-sync as declared", inputClass(semi), exitcode.Usage},
		{"through the runner", fmt.Errorf("start server: %w", inputClass(fmt.Errorf("check: %w", semi))), exitcode.Usage},
		{"a server that does not answer", inputClass(errors.New("node2: dial tcp 127.0.0.1:1: connect: connection refused")), exitcode.Failure},
		{"replication not running", inputClass(errors.New("node3 (127.0.0.1:3308): replication is not running (IO thread Yes, SQL thread No)")), exitcode.Failure},
		{"found by Heal", fmt.Errorf("the existing topology is not as it was: %w", semi), exitcode.Failure},
	} {
		if got := exitcode.Of(c.err); got != c.want {
			t.Errorf("%s: exit code %d, want %d (%v)", c.name, got, c.want, c.err)
		}
	}
	if got := inputClass(semi).Error(); got != semi.Error() {
		t.Errorf("the class changed the message: %q", got)
	}
	// The DSN count is checked before any connection: no server needed.
	_, err := Attach(context.Background(), Config{Topology: experiment.Topology{Kind: experiment.TopologyReplicas, Replicas: 2},
		DSNs: []string{"root@tcp(127.0.0.1:1)/"}})
	if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "3 nodes, and 1 DSNs were given") {
		t.Errorf("one DSN for three nodes: %v (exit code %d), want exit code 2", err, exitcode.Of(err))
	}
}

// On one real server given as both nodes of a replicas topology: semi_sync
// = true where the server has it OFF, and a second node that is not a
// replica, are refused before anything ran with exit code 2, and the
// server is left running.
func TestAttachMismatchExitCodeOnAServer(t *testing.T) {
	needServer(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sb, err := server.StartSandbox(ctx, server.SandboxConfig{TempDir: t.TempDir(), Startup: []server.Setting{{Name: "innodb_buffer_pool_size", Value: "32M"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Stop(context.Background()) })
	dsn := sb.Endpoint().FormatDSN()
	for _, c := range []struct {
		semi bool
		want string
	}{
		{true, "rpl_semi_sync_master_enabled is OFF, and the manifest says semi_sync = true"},
		{false, "node2 (" + sb.Info().Address + ") is not a replica"},
	} {
		_, err := Attach(ctx, Config{Topology: experiment.Topology{Kind: experiment.TopologyReplicas, Replicas: 1, SemiSync: c.semi}, DSNs: []string{dsn, dsn}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("semi_sync = %t: got %v, want an error with %q", c.semi, err, c.want)
		}
		if code := exitcode.Of(fmt.Errorf("start server: %w", err)); code != exitcode.Usage {
			t.Errorf("semi_sync = %t: exit code %d, want %d: %v", c.semi, code, exitcode.Usage, err)
		}
	}
	if !sb.Alive() {
		t.Error("Attach stopped a server it does not own")
	}
}

// Existing replicas are checked against the manifest's topology: node 1
// must be the primary and every other node its running replica, semi-sync
// as declared. The attached cluster verifies data like a started one, sets
// globals on every node and puts them back, and never stops a node.
func TestAttachReplicas(t *testing.T) {
	needServer(t, false)
	c := startCluster(t, experiment.Topology{Kind: experiment.TopologyReplicas, Replicas: 2})
	ctx := context.Background()
	top := experiment.Topology{Kind: experiment.TopologyReplicas, Replicas: 2}
	for i, n := range c.Nodes() {
		mustExec(t, nodeDB(t, n), "SET GLOBAL sync_binlog = "+[]string{"5", "6", "7"}[i])
	}

	// Wrong order, a count that does not match, semi-sync not as found:
	// each the user's input, exit code 2.
	d := dsns(c, "")
	for _, tc := range []struct {
		name string
		top  experiment.Topology
		dsns []string
		want string
	}{
		{"replica first", top, []string{d[1], d[0], d[2]}, "node2 (" + c.Nodes()[0].srv.Info().Address + ") is not a replica"},
		{"a replica's replica order", top, []string{d[0], d[2], d[1]}, ""},
		{"semi-sync declared", experiment.Topology{Kind: experiment.TopologyReplicas, Replicas: 2, SemiSync: true}, d,
			"rpl_semi_sync_master_enabled is OFF, and the manifest says semi_sync = true"},
		{"too few", top, d[:2], "the replicas topology has 3 nodes, and 2 DSNs were given"},
	} {
		a, err := Attach(ctx, Config{Topology: tc.top, DSNs: tc.dsns})
		if tc.want == "" {
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if err := a.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
		if code := exitcode.Of(err); code != exitcode.Usage {
			t.Errorf("%s: exit code %d, want %d (input that does not match the servers)", tc.name, code, exitcode.Usage)
		}
	}

	a, err := Attach(ctx, Config{Topology: top, DSNs: d})
	if err != nil {
		t.Fatal(err)
	}
	if Of(a) != a.Cluster || Of(c) != c {
		t.Fatal("Of does not find the clusters")
	}
	// The runner's first Restart: checks restart-only values, applies the
	// dynamic ones on every node; Apply sets the others.
	if err := a.Restart(ctx, []server.Setting{{Name: "binlog_format", Value: "ROW"}, {Name: "sync_binlog", Value: "1"}}); err != nil {
		t.Fatal(err)
	}
	if err := a.VerifyStartup(ctx, []server.Setting{{Name: "log_bin", Value: "OFF"}}); err == nil || !strings.Contains(err.Error(), "node3") {
		t.Fatalf("log_bin = OFF on replicas with binary logs: %v", err)
	}
	mustExec(t, nodeDB(t, a.Nodes()[0]), "CREATE DATABASE sbtest", "CREATE TABLE sbtest.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
		"INSERT INTO sbtest.t VALUES (1,1),(2,2)")
	ck, err := a.Verify(ctx, "sbtest", []string{"t"}, "after loading", time.Minute)
	if err != nil || !ck.Equal || len(ck.Nodes) != 3 {
		t.Fatalf("verify: %+v %v", ck, err)
	}
	if _, err := a.Heal(ctx); err != nil {
		t.Fatalf("heal of a healthy topology: %v", err)
	}
	if err := a.Do(ctx, experiment.Event{Node: 2, Action: experiment.ActionStop}); err == nil {
		t.Fatal("an event stopped a server benchmatrix does not own")
	}
	for i, n := range a.Nodes() {
		var v string
		if err := nodeDB(t, n).QueryRow("SELECT @@global.sync_binlog").Scan(&v); err != nil || v != "1" {
			t.Fatalf("node%d sync_binlog %q (%v), want 1 while attached", i+1, v, err)
		}
	}
	// A replica that stops replicating is not the topology any more.
	r := nodeDB(t, c.Nodes()[2])
	mustExec(t, r, "STOP SLAVE SQL_THREAD")
	if _, err := a.Heal(ctx); err == nil || !strings.Contains(err.Error(), "node3") || !strings.Contains(err.Error(), "replication is not running") {
		t.Fatalf("heal with node3's SQL thread stopped: %v", err)
	} else if code := exitcode.Of(err); code != exitcode.Failure {
		t.Errorf("heal with node3's SQL thread stopped: exit code %d, want %d (the servers' state, not the input)", code, exitcode.Failure)
	}
	mustExec(t, r, "START SLAVE SQL_THREAD")

	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for i, n := range c.Nodes() {
		if !n.srv.Alive() {
			t.Fatalf("node%d was stopped", i+1)
		}
		var v string
		if err := nodeDB(t, n).QueryRow("SELECT @@global.sync_binlog").Scan(&v); err != nil || v != []string{"5", "6", "7"}[i] {
			t.Errorf("node%d sync_binlog %q (%v) after the run, want its own %s back", i+1, v, err, []string{"5", "6", "7"}[i])
		}
	}
	if j, _ := filepath.Glob(filepath.Join(os.TempDir(), server.JournalPrefix+"*")); len(j) > 0 {
		for _, f := range j {
			if strings.Contains(f, "-"+strconv.Itoa(os.Getpid())+"-") {
				t.Errorf("journal left: %s", f)
			}
		}
	}
}

// An existing Galera cluster: every node Synced in one cluster; fc_limit
// is set on every node by its provider option alone and put back.
func TestAttachGaleraFCLimit(t *testing.T) {
	needServer(t, true)
	c := startCluster(t, experiment.Topology{Kind: experiment.TopologyGalera, Nodes: 3})
	ctx := context.Background()
	fc := func(n *Node) string {
		var all string
		if err := nodeDB(t, n).QueryRow("SELECT @@global.wsrep_provider_options").Scan(&all); err != nil {
			t.Fatal(err)
		}
		v, ok := server.ProviderOption(all, "gcs.fc_limit")
		if !ok {
			t.Fatalf("no gcs.fc_limit in %q", all)
		}
		return v
	}
	before := fc(c.Nodes()[1])
	d := dsns(c, "")
	if _, err := Attach(ctx, Config{Topology: experiment.Topology{Kind: experiment.TopologyGalera, Nodes: 3}, DSNs: []string{d[0], d[1], d[1]}}); err == nil ||
		!strings.Contains(err.Error(), "are the same server") || exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("the same node twice: %v (exit code %d, want %d)", err, exitcode.Of(err), exitcode.Usage)
	}
	a, err := Attach(ctx, Config{Topology: experiment.Topology{Kind: experiment.TopologyGalera, Nodes: 3}, DSNs: d})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetFCLimit(ctx, 77); err != nil {
		t.Fatal(err)
	}
	if err := a.SetFCLimit(ctx, 78); err != nil {
		t.Fatal(err)
	}
	for i, n := range a.Nodes() {
		if v := fc(n); v != "78" {
			t.Fatalf("node%d gcs.fc_limit %s, want 78", i+1, v)
		}
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for i, n := range c.Nodes() {
		if v := fc(n); v != before {
			t.Errorf("node%d gcs.fc_limit %s after the run, want %s back", i+1, v, before)
		}
	}
	if err := c.waitSynced(ctx); err != nil {
		t.Fatalf("the cluster after being attached: %v", err)
	}
}
