package topology

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"benchmatrix/server"
)

// A Galera cluster on loopback: node 1 bootstraps (--wsrep-new-cluster),
// the others join it and receive its data by rsync state transfer. Every
// port is on 127.0.0.1: the MySQL port, group communication
// (gmcast.listen_addr: without it Galera listens on 0.0.0.0), incremental
// transfer (ist.recv_addr) and snapshot transfer (sst receive address).
// When benchmatrix is root, the nodes' directories belong to nobody:
// rsync's daemon on the joining node drops to nobody and must still write
// the datadir (the servers stay root, so they die with benchmatrix).

// GaleraProvider is the wsrep provider library (Debian's galera-4).
var GaleraProvider = "/usr/lib/galera/libgalera_smm.so"

// galeraDirOwner owns the Galera nodes' directories under root.
const galeraDirOwner = "nobody"

type galeraPorts struct{ gcomm, ist, sst int }

// CheckGalera says what is missing to run Galera here.
func CheckGalera() error {
	if _, err := os.Stat(GaleraProvider); err != nil {
		return fmt.Errorf("a Galera topology needs the wsrep provider %s (Debian: apt-get install -y galera-4): %w", GaleraProvider, err)
	}
	return nil
}

// galera is the kind (catalog.TopologyGalera).
type galera struct{}

func (galera) open(ctx context.Context, c *Cluster) error    { return c.openGalera(ctx) }
func (galera) restart(ctx context.Context, c *Cluster) error { return c.restartGalera(ctx) }
func (galera) checkExisting(ctx context.Context, c *Cluster, log io.Writer) error {
	return c.checkGalera(ctx, log) // attach.go
}
func (galera) refreshJoin(c *Cluster, n *Node)                       { c.refreshGaleraJoin(n) } // docker.go
func (galera) checkTarget(context.Context, *Cluster) (string, error) { return "", nil }

// rejoined waits until the node is Synced in the whole cluster again.
func (galera) rejoined(ctx context.Context, c *Cluster, n *Node) error {
	return c.waitNodeSynced(ctx, n, time.Now().Add(c.cfg.ReadyTimeout))
}

// heal: a node paused past the suspect timeout was evicted; it rejoins by
// itself once it runs again. One that does not within the wait is started
// again; one that still does not fails with its log.
func (galera) heal(ctx context.Context, c *Cluster) ([]string, error) {
	var did []string
	deadline := time.Now().Add(rejoinWait)
	for _, n := range c.nodes {
		if err := c.waitNodeSynced(ctx, n, deadline); err == nil {
			continue
		}
		if err := n.srv.Halt(time.Minute); err != nil {
			return did, fmt.Errorf("%s: %w", n.Name, err)
		}
		if err := c.startAgain(ctx, n); err != nil {
			return did, err
		}
		did = append(did, n.Name+" restarted (it had not rejoined)")
	}
	return did, nil
}

// rejoinWait is how long Heal waits for a Galera node to be Synced again
// before it restarts it.
var rejoinWait = 30 * time.Second

// caughtUp: a node that was cut off (paused past the suspect timeout,
// disconnected) may still be rejoining: wait until it is Synced in the
// whole cluster, then every read of this session first waits until the
// node applied what the cluster committed before it.
func (galera) caughtUp(ctx context.Context, c *Cluster, n *Node, db *sql.DB, _ string, timeout time.Duration) error {
	if err := c.waitNodeSynced(ctx, n, time.Now().Add(timeout)); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, "SET SESSION wsrep_sync_wait = 1"); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return nil
}

func (c *Cluster) openGalera(ctx context.Context) error {
	if err := CheckGalera(); err != nil && !c.isDocker() { // docker.go: the image has it
		return err
	}
	t := c.cfg.Topology
	c.name = "benchmatrix-" + strconv.Itoa(os.Getpid())
	var addrs []string
	for i := 1; i <= t.Nodes; i++ {
		n := c.newNode(i)
		for _, p := range []*int{&n.galera.gcomm, &n.galera.ist, &n.galera.sst} {
			port, err := server.FreePort()
			if err != nil {
				return fmt.Errorf("find a free port: %w", err)
			}
			*p = port
		}
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(n.galera.gcomm))
		c.nodes = append(c.nodes, n)
	}
	for i, n := range c.nodes {
		n.join = c.galeraOpts(n, i+1, addrs)
		n.opts = n.join
		if i == 0 {
			n.opts = append(append([]server.Setting(nil), n.join...), server.Setting{Name: "wsrep_new_cluster", Value: "true"})
		}
		fmt.Fprintf(c.cfg.Log, "  starting %s (%s)\n", n.Name, map[bool]string{true: "bootstraps the cluster", false: "joins"}[i == 0])
		if err := c.startNode(ctx, n, galeraDirOwner); err != nil {
			return err
		}
		// Later starts join the running cluster.
		n.opts = n.join
	}
	return c.waitSynced(ctx)
}

func (c *Cluster) galeraOpts(n *Node, id int, addrs []string) []server.Setting {
	if c.isDocker() {
		return c.dockerGaleraOpts(n, id) // docker.go
	}
	popts := "gmcast.listen_addr=tcp://127.0.0.1:" + strconv.Itoa(n.galera.gcomm) +
		";ist.recv_addr=127.0.0.1:" + strconv.Itoa(n.galera.ist)
	if fc := c.cfg.Topology.FCLimit; fc > 0 {
		popts += ";gcs.fc_limit=" + strconv.Itoa(fc)
	}
	return []server.Setting{
		{Name: "server_id", Value: strconv.Itoa(id)},
		{Name: "wsrep_on", Value: "ON"},
		{Name: "wsrep_provider", Value: GaleraProvider},
		{Name: "wsrep_cluster_name", Value: c.name},
		{Name: "wsrep_cluster_address", Value: "gcomm://" + strings.Join(addrs, ",")},
		{Name: "wsrep_node_name", Value: n.Name},
		{Name: "wsrep_node_address", Value: "127.0.0.1"},
		{Name: "wsrep_sst_receive_address", Value: "127.0.0.1:" + strconv.Itoa(n.galera.sst)},
		{Name: "wsrep_sst_method", Value: "rsync"},
		{Name: "wsrep_provider_options", Value: popts},
		{Name: "binlog_format", Value: "ROW"},
		{Name: "innodb_autoinc_lock_mode", Value: "2"},
	}
}

// restartGalera bootstraps from node 1 (stopped last, so safe to
// bootstrap) and lets the others join by incremental transfer.
func (c *Cluster) restartGalera(ctx context.Context) error {
	// After a crash of node 1 its state file says it may not bootstrap
	// (another node might be ahead); every node is stopped here and the
	// runner reloads the data after a crash, so it may.
	safeToBootstrap(c.nodes[0].srv.Info().Datadir)
	for i, n := range c.nodes {
		c.refreshGaleraJoin(n) // docker.go
		opts := n.join
		if i == 0 {
			opts = append(append([]server.Setting(nil), n.join...), server.Setting{Name: "wsrep_new_cluster", Value: "true"})
		}
		if err := n.srv.Restart(ctx, append(c.Startup(), opts...)); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return c.waitSynced(ctx)
}

// waitSynced waits until every node is Synced in a cluster of all nodes.
func (c *Cluster) waitSynced(ctx context.Context) error {
	deadline := time.Now().Add(c.cfg.ReadyTimeout)
	for _, n := range c.nodes {
		if err := c.waitNodeSynced(ctx, n, deadline); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) waitNodeSynced(ctx context.Context, n *Node, deadline time.Time) error {
	want := strconv.Itoa(len(c.nodes))
	if c.existing && c.size > 0 {
		want = strconv.Itoa(c.size) // attach.go: as found
	}
	for {
		st, err := nodeStatus(ctx, n, "wsrep_local_state_comment", "wsrep_cluster_size", "wsrep_ready")
		if err == nil && st["wsrep_local_state_comment"] == "Synced" && st["wsrep_cluster_size"] == want {
			return nil
		}
		if !n.srv.Alive() {
			return fmt.Errorf("%s left the cluster (its process exited)\nlast lines of its error log:\n%s", n.Name, n.srv.LogTail(20))
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("state %q, cluster size %s of %s", st["wsrep_local_state_comment"], st["wsrep_cluster_size"], want)
			}
			return fmt.Errorf("%s did not join the cluster within %s: %w\nlast lines of its error log:\n%s", n.Name, c.cfg.ReadyTimeout, err, n.srv.LogTail(20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// nodeStatus reads some global status values of a node.
func nodeStatus(ctx context.Context, n *Node, names ...string) (map[string]string, error) {
	db, err := open(n)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return server.Status(ctx, db, names...)
}

// SetFCLimit sets gcs.fc_limit on every node (a cell's fc_limit).
func (c *Cluster) SetFCLimit(ctx context.Context, limit int) error {
	if !c.cfg.Topology.Describe().FlowControl || limit <= 0 {
		return nil
	}
	for _, n := range c.nodes {
		if e, ok := externalOf(n); ok { // attach.go: put back when the run ends
			if err := e.SetProviderOption(ctx, "gcs.fc_limit", strconv.Itoa(limit)); err != nil {
				return fmt.Errorf("%s: %w", n.Name, err)
			}
			continue
		}
		if err := exec(ctx, n, fmt.Sprintf("SET GLOBAL wsrep_provider_options = 'gcs.fc_limit=%d'", limit)); err != nil {
			return err
		}
	}
	return nil
}

// safeToBootstrap sets safe_to_bootstrap: 1 in a datadir's grastate.dat.
func safeToBootstrap(datadir string) {
	p := filepath.Join(datadir, "grastate.dat")
	b, err := os.ReadFile(p)
	if err != nil {
		return
	}
	s := strings.Replace(string(b), "safe_to_bootstrap: 0", "safe_to_bootstrap: 1", 1)
	if s != string(b) {
		_ = os.WriteFile(p, []byte(s), 0o660) // keeps its owner
	}
}
