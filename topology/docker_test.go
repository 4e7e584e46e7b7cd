package topology

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/observe"
	"benchmatrix/server"
)

// needDocker skips without a Docker engine or the project's image (make
// docker-image) unless CI is set, where both are part of the contract.
func needDocker(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	err := server.DockerAvailable(ctx)
	if err == nil {
		var ok bool
		ok, err = server.DockerImageExists(ctx, catalog.DefaultDockerImage)
		if err == nil && !ok {
			err = &server.ImageMissingError{Image: catalog.DefaultDockerImage}
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs a Docker engine and the image: %v", err)
		}
		t.Skipf("skipping the docker topology tests: %v", err)
	}
}

// ours lists this process's containers and networks (by owner label).
func ours(t *testing.T) (containers, networks []string) {
	t.Helper()
	pool, err := dockertest.NewPool("")
	if err != nil {
		t.Fatal(err)
	}
	label := "benchmatrix.owner-pid=" + strconv.Itoa(os.Getpid())
	cs, err := pool.Client.ListContainers(dc.ListContainersOptions{All: true, Filters: map[string][]string{"label": {label}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		containers = append(containers, c.Names...)
	}
	ns, err := pool.Client.FilteredListNetworks(dc.NetworkFilterOpts{"label": {label: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		networks = append(networks, n.Name)
	}
	return containers, networks
}

func startDockerCluster(t *testing.T, top experiment.Topology) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := Open(ctx, Config{Topology: top, Provider: catalog.Docker,
		Startup: []server.Setting{{Name: "innodb_buffer_pool_size", Value: "32M"}}})
	if err != nil {
		t.Fatal(err)
	}
	if c.docker.net == nil {
		t.Fatal("no private network")
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		if cs, ns := ours(t); len(cs)+len(ns) > 0 {
			t.Errorf("left behind: containers %v, networks %v", cs, ns)
		}
	})
	return c
}

// A primary and a replica in containers on a private network: the replica
// reads from the primary's address there; the data is equal after loading
// and after a restart (new containers); a disconnected replica stops
// answering (the sampler's answered column falls to 0) and, reconnected,
// catches up with what the primary wrote meanwhile.
func TestDockerReplicasReplicateDisconnectReconnect(t *testing.T) {
	needDocker(t)
	c := startDockerCluster(t, experiment.Topology{Kind: catalog.TopologyReplicas, Replicas: 1})
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
	st, err := ReplicaStatus(ctx, c.Nodes()[1])
	if err != nil {
		t.Fatal(err)
	}
	if ip := c.Nodes()[0].srv.(*server.Docker).PrivateIP(); st["Master_Host"] != ip || ip == "" {
		t.Fatalf("replica reads from %q, want the primary's private address %q", st["Master_Host"], ip)
	}
	restartAndWrite(t, c, p)

	s, err := observe.StartNodes(ctx, sources(t, c), nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := c.Do(ctx, experiment.Event{Node: 2, Action: experiment.ActionDisconnect}); err != nil {
		t.Fatal(err)
	}
	const writes = 20
	for i := 0; i < writes; i++ {
		mustExec(t, p, "INSERT INTO sbtest.t VALUES ("+strconv.Itoa(1000+i)+", 1)")
	}
	time.Sleep(2500 * time.Millisecond)
	rows := s.Stop(4)
	answered := column(t, s, rows, "node2.answered")
	if answered[0] != 1 || answered[len(answered)-1] != 0 {
		t.Fatalf("node2.answered %v: want 1 before the disconnect and 0 after", answered)
	}
	if err := c.Do(ctx, experiment.Event{Node: 2, Action: experiment.ActionReconnect}); err != nil {
		t.Fatal(err)
	}
	ck, err = c.Verify(ctx, "sbtest", []string{"t"}, "after reconnecting", time.Minute)
	if err != nil || !ck.Equal || ck.Nodes[1].Tables[0].Rows != 4+writes {
		t.Fatalf("after reconnecting: %+v %v", ck, err)
	}
	// Heal reconnects a node left disconnected.
	if err := c.Do(ctx, experiment.Event{Node: 2, Action: experiment.ActionDisconnect}); err != nil {
		t.Fatal(err)
	}
	did, err := c.Heal(ctx)
	if err != nil || len(did) != 1 || did[0] != "node2 reconnected" {
		t.Fatalf("heal: %v %v", did, err)
	}
}

// A 3-node Galera cluster in containers forms on the private network,
// replicates, and forms again after a restart (new containers, node 1
// bootstrapping).
func TestDockerGaleraFormsAndReplicates(t *testing.T) {
	needDocker(t)
	c := startDockerCluster(t, experiment.Topology{Kind: catalog.TopologyGalera, Nodes: 3})
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
	restartAndWrite(t, c, p)
	// Node 3 paused (docker pause) and resumed, then stopped and started
	// again (a new container: its cluster address is recomputed from the
	// others' addresses), rejoins and has the rows written meanwhile.
	ctx := context.Background()
	for _, a := range []string{experiment.ActionPause, experiment.ActionResume, experiment.ActionStop} {
		if err := c.Do(ctx, experiment.Event{Node: 3, Action: a}); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
	}
	mustExec(t, p, "INSERT INTO sbtest.t VALUES (200, 200)")
	if err := c.Do(ctx, experiment.Event{Node: 3, Action: experiment.ActionStart}); err != nil {
		t.Fatal(err)
	}
	ck, err = c.Verify(ctx, "sbtest", []string{"t"}, "after node 3 came back", time.Minute)
	if err != nil || !ck.Equal || ck.Nodes[2].Tables[0].Rows != 5 {
		t.Fatalf("after node 3 came back: %+v %v", ck, err)
	}
	var addr string
	if err := nodeDB(t, c.Nodes()[2]).QueryRow("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='WSREP_INCOMING_ADDRESSES'").Scan(&addr); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes() {
		if ip := n.srv.(*server.Docker).PrivateIP(); ip == "" || !strings.Contains(addr, ip) {
			t.Fatalf("wsrep_incoming_addresses %q lacks %s's private address %q", addr, n.Name, ip)
		}
	}
}

// A Galera node cut off its network past the suspect timeout is evicted;
// the other two keep a primary component and take writes; reconnected,
// the node rejoins (Heal waits for it to be Synced, or restarts it) and
// holds the rows written meanwhile.
func TestDockerGaleraNodeDisconnected(t *testing.T) {
	needDocker(t)
	c := startDockerCluster(t, experiment.Topology{Kind: catalog.TopologyGalera, Nodes: 3})
	p := nodeDB(t, c.Nodes()[0])
	mustExec(t, p, "CREATE DATABASE sbtest", "CREATE TABLE sbtest.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB")
	ctx := context.Background()
	if err := c.Do(ctx, experiment.Event{Node: 3, Action: experiment.ActionDisconnect}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(8 * time.Second) // past evs.suspect_timeout (5 s)
	mustExec(t, p, "INSERT INTO sbtest.t VALUES (1,1),(2,2)")
	var size string
	if err := p.QueryRow("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='WSREP_CLUSTER_SIZE'").Scan(&size); err != nil || size != "2" {
		t.Fatalf("cluster size %q (%v) with node 3 cut off, want 2", size, err)
	}
	did, err := c.Heal(ctx)
	if err != nil || len(did) == 0 || did[0] != "node3 reconnected" {
		t.Fatalf("heal: %v %v", did, err)
	}
	t.Logf("healed: %v", did)
	ck, err := c.Verify(ctx, "sbtest", []string{"t"}, "after reconnecting", time.Minute)
	if err != nil || !ck.Equal || ck.Nodes[2].Tables[0].Rows != 2 {
		t.Fatalf("after reconnecting: %+v %v", ck, err)
	}
}
