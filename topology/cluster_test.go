package topology

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/server"
)

// needServer skips without a server binary (or Galera's provider, for
// galera) unless CI is set, where they must be installed.
func needServer(t *testing.T, galera bool) {
	t.Helper()
	_, err := server.FindBinary("")
	if err == nil && galera {
		err = CheckGalera()
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install it: %v", err)
		}
		t.Skip(err)
	}
}

func startCluster(t *testing.T, top experiment.Topology) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	tmp := t.TempDir()
	if top.Kind == catalog.TopologyGalera {
		// The nodes run as mysql, which must reach their directories.
		for _, d := range []string{tmp, filepath.Dir(tmp)} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, err := Open(ctx, Config{Topology: top, TempDir: tmp, Startup: []server.Setting{{Name: "innodb_buffer_pool_size", Value: "32M"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		left, _ := filepath.Glob(filepath.Join(tmp, server.SandboxDirPrefix+"*"))
		for _, l := range left {
			if !strings.Contains(l, "-golden-") {
				t.Errorf("left behind: %s", l)
			}
		}
		server.Cleanup()
	})
	return c
}

func nodeDB(t *testing.T, n *Node) *sql.DB {
	t.Helper()
	cfg := n.Endpoint()
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestReplicasReplicateAndVerify(t *testing.T) {
	needServer(t, false)
	c := startCluster(t, experiment.Topology{Kind: catalog.TopologyReplicas, Replicas: 1, SemiSync: true})
	if got := len(c.Nodes()); got != 2 {
		t.Fatalf("%d nodes, want 2", got)
	}
	p := nodeDB(t, c.Nodes()[0])
	mustExec(t, p, "CREATE DATABASE sbtest", "CREATE TABLE sbtest.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
		"INSERT INTO sbtest.t VALUES (1,1),(2,2),(3,3)")
	ctx := context.Background()
	ck, err := c.Verify(ctx, "sbtest", []string{"t"}, "after loading", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !ck.Equal || ck.Nodes[1].Tables[0].Rows != 3 {
		t.Fatalf("replica differs: %+v", ck)
	}
	// A restart (a restart-only variable changed) keeps replicating.
	restartAndWrite(t, c, p)
	// A write on the replica alone makes the check fail: it can.
	r := nodeDB(t, c.Nodes()[1])
	mustExec(t, r, "SET SESSION sql_log_bin=0", "INSERT INTO sbtest.t VALUES (4,4)")
	ck, err = c.Verify(ctx, "sbtest", []string{"t"}, "after the cell", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Equal || len(ck.Differences) != 1 || !strings.Contains(ck.Differences[0], "node2 t: 5 rows") {
		t.Fatalf("a diverged replica was not found: %+v", ck)
	}
	var semi string
	if err := p.QueryRow("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='RPL_SEMI_SYNC_MASTER_CLIENTS'").Scan(&semi); err != nil || semi != "1" {
		t.Fatalf("semi-sync clients %q (%v), want 1", semi, err)
	}
}

func TestGaleraFormsAndReplicates(t *testing.T) {
	needServer(t, true)
	c := startCluster(t, experiment.Topology{Kind: catalog.TopologyGalera, Nodes: 3})
	p := nodeDB(t, c.Nodes()[0])
	mustExec(t, p, "CREATE DATABASE sbtest", "CREATE TABLE sbtest.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
		"INSERT INTO sbtest.t VALUES (1,1),(2,2),(3,3)")
	ck, err := c.Verify(context.Background(), "sbtest", []string{"t"}, "after loading", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !ck.Equal || len(ck.Nodes) != 3 || ck.Nodes[2].Tables[0].Rows != 3 {
		t.Fatalf("nodes differ: %+v", ck)
	}
	// Restarted (node 1 bootstraps again), it forms and replicates again.
	restartAndWrite(t, c, p)
	var size string
	if err := nodeDB(t, c.Nodes()[2]).QueryRow("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='WSREP_CLUSTER_SIZE'").Scan(&size); err != nil || size != "3" {
		t.Fatalf("cluster size %q (%v)", size, err)
	}
}

// restartAndWrite restarts the cluster with another startup option, writes
// a row on node 1 and checks that every node has it.
func restartAndWrite(t *testing.T, c *Cluster, p *sql.DB) {
	t.Helper()
	ctx := context.Background()
	startup := append(c.Startup(), server.Setting{Name: "max_connections", Value: "77"})
	if err := c.Restart(ctx, startup); err != nil {
		t.Fatal(err)
	}
	mustExec(t, p, "INSERT INTO sbtest.t VALUES (100, 100)")
	ck, err := c.Verify(ctx, "sbtest", []string{"t"}, "after a restart", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !ck.Equal || ck.Nodes[len(ck.Nodes)-1].Tables[0].Rows != 4 {
		t.Fatalf("after a restart: %+v", ck)
	}
	var mc string
	if err := nodeDB(t, c.Nodes()[len(c.Nodes())-1]).QueryRow("SELECT @@max_connections").Scan(&mc); err != nil || mc != "77" {
		t.Fatalf("last node's max_connections %q (%v): the restart did not reach it", mc, err)
	}
}
