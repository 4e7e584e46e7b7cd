// Package topology runs a cell on several servers: a primary with GTID
// replicas (asynchronous or semi-synchronous) or a Galera cluster. Each
// node is a server of the manifest's provider (a sandbox: its own
// directory, loopback ports, killed with benchmatrix); the Cluster is a
// server.Server whose endpoint is the primary (node 1), so the runner
// drives it like one server and asks it for its nodes beside.
package topology

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/server"
)

// Config says how to start a cluster.
type Config struct {
	Topology experiment.Topology
	// Binary and TempDir are the sandbox's ([server] binary, tmpdir).
	Binary  string
	TempDir string
	// Startup are the options every node starts with ([server.config]
	// and the cell's restart-only variables).
	Startup []server.Setting
	// Log hears what the cluster does (nodes starting, joining).
	Log io.Writer
	// ReadyTimeout bounds each node's start and the cluster's forming.
	ReadyTimeout time.Duration
	// Provider is sandbox (default) or docker; Image is docker's image
	// (docker.go).
	Provider catalog.ProviderName
	Image    string
	// DSNs are the nodes of an existing topology (provider external,
	// attach.go), node 1 first.
	DSNs []string
}

// kind is how one topology kind starts, restarts, heals and checks its
// nodes: one file per kind (single.go, replicas.go, galera.go), each the
// only place that knows its name; kinds lists them. What the manifest may
// say of a kind (its size key, its nodes' roles) is catalog's table.
type kind interface {
	// open starts every node and connects them.
	open(ctx context.Context, c *Cluster) error
	// restart starts every node again, all halted, with c.Startup().
	restart(ctx context.Context, c *Cluster) error
	// checkExisting checks that existing nodes are the kind (attach.go).
	checkExisting(ctx context.Context, c *Cluster, log io.Writer) error
	// rejoined waits until node n, started again, serves its part.
	rejoined(ctx context.Context, c *Cluster, n *Node) error
	// heal is the kind's own part of Heal, once every node runs.
	heal(ctx context.Context, c *Cluster) ([]string, error)
	// refreshJoin recomputes n's options before it starts again.
	refreshJoin(c *Cluster, n *Node)
	// checkTarget is what a data check waits for the nodes to reach (read
	// on node 1); caughtUp waits until node n (not node 1) reached it.
	checkTarget(ctx context.Context, c *Cluster) (string, error)
	caughtUp(ctx context.Context, c *Cluster, n *Node, db *sql.DB, target string, timeout time.Duration) error
}

// checker is a kind that checks what its nodes would run before anything
// is created (group.go: a MySQL binary or image with the plugin).
type checker interface {
	check(ctx context.Context, c *Cluster) error
}

// kinds is every topology kind, by name.
var kinds = map[string]kind{
	catalog.TopologySingle:   single{},
	catalog.TopologyReplicas: replicas{},
	catalog.TopologyGalera:   galera{},
	catalog.TopologyGroup:    group{},
}

// kindOf finds a topology's kind.
func kindOf(t experiment.Topology) (kind, error) {
	k, ok := kinds[t.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown topology kind %q", t.Kind)
	}
	return k, nil
}

// Node is one server of the cluster.
type Node struct {
	Name string // node1, node2, ...
	Role catalog.Role
	srv  nodeServer // *server.Sandbox or *server.Docker (docker.go)
	// opts are the node's own startup options (server_id, wsrep
	// addresses); join are those it starts again with after a fault.
	opts, join []server.Setting
	galera     galeraPorts
	paused     bool // by a pause event, until resumed
	// down: a stop or kill event ended the node on purpose, until it is
	// started again; a node found not running without it died by itself
	// (Unplanned, faults.go). Under the cluster's mu: events set it on
	// their own goroutine.
	down bool
	// disconnected by a disconnect event, until reconnected (docker.go)
	disconnected bool
}

// Server is the node's server.
func (n *Node) Server() server.Server { return n.srv }

// Endpoint is a client configuration for the node.
func (n *Node) Endpoint() *mysql.Config { return n.srv.Endpoint() }

// Cluster is a running topology; it implements server.Server on node 1.
type Cluster struct {
	cfg   Config
	kind  kind
	nodes []*Node
	name  string // the Galera cluster's name

	mu      sync.Mutex
	startup []server.Setting

	docker dockerCluster // the docker provider's network (docker.go)

	// existing: the nodes are servers someone else runs (attach.go);
	// size is a Galera cluster's size as found (it may have more members
	// than the nodes given).
	existing bool
	size     int

	// groupVersion is a group's MySQL version, once checked (group.go).
	groupVersion *catalog.MySQLVersion
}

var _ interface {
	server.Server
	server.Liveness
	server.ProcessOwner
} = (*Cluster)(nil)

// Open starts every node of the topology and connects them: replication
// from the primary, or one Galera cluster. Everything started is stopped
// again when it fails.
func Open(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 2 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	c := &Cluster{cfg: cfg, startup: append([]server.Setting(nil), cfg.Startup...)}
	defer func() {
		if err != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			_ = c.Stop(sctx)
		}
	}()
	if c.kind, err = kindOf(cfg.Topology); err != nil {
		return nil, err
	}
	if k, ok := c.kind.(checker); ok {
		// Before the network: a refusal leaves nothing to remove.
		if err = k.check(ctx, c); err != nil {
			return nil, err
		}
	}
	if err = c.openDocker(ctx); err != nil { // docker.go
		return nil, err
	}
	if err = c.kind.open(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// Nodes lists the nodes, node 1 (the primary) first.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// Topology is what the cluster was started as.
func (c *Cluster) Topology() experiment.Topology { return c.cfg.Topology }

// newNode is node i (from 1), with its kind's role for it.
func (c *Cluster) newNode(i int) *Node {
	return &Node{Name: "node" + strconv.Itoa(i), Role: c.cfg.Topology.Describe().Role(i)}
}

// startNode starts one more sandbox as node i (from 1).
func (c *Cluster) startNode(ctx context.Context, n *Node, dirOwner string) error {
	if c.isDocker() {
		return c.startContainer(ctx, n) // docker.go
	}
	sb, err := server.StartSandbox(ctx, server.SandboxConfig{Binary: c.cfg.Binary, TempDir: c.cfg.TempDir,
		Startup: append(c.Startup(), n.opts...), ReadyTimeout: c.cfg.ReadyTimeout, DirOwner: dirOwner})
	if err != nil {
		return fmt.Errorf("%s (%s): %w", n.Name, n.Role, err)
	}
	n.srv = sb
	return nil
}

// Info implements server.Server: node 1's, naming the topology.
func (c *Cluster) Info() server.Info {
	info := c.nodes[0].srv.Info()
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.Name + "=" + n.srv.Info().Address
	}
	info.Address = strings.Join(addrs, " ")
	return info
}

// Endpoint implements server.Server: the primary.
func (c *Cluster) Endpoint() *mysql.Config { return c.nodes[0].srv.Endpoint() }

// Startup implements server.Server: the options common to every node.
func (c *Cluster) Startup() []server.Setting {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]server.Setting(nil), c.startup...)
}

// LogTail implements server.Server: each node's last lines, labelled.
func (c *Cluster) LogTail(n int) string {
	var b strings.Builder
	for _, nd := range c.nodes {
		if nd.srv == nil {
			continue
		}
		if t := nd.srv.LogTail(n); t != "" {
			fmt.Fprintf(&b, "--- %s (%s) ---\n%s\n", nd.Name, nd.Role, t)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// Alive implements server.Liveness: every node runs.
func (c *Cluster) Alive() bool {
	for _, n := range c.nodes {
		if n.srv == nil || !n.srv.Alive() {
			return false
		}
	}
	return len(c.nodes) > 0
}

// PID implements server.ProcessOwner: the primary's.
func (c *Cluster) PID() int { return c.nodes[0].srv.PID() }

// PeerPIDs are the other nodes' processes on this host (0s left out): the
// sampler counts their CPU and IO as the server's, not as other load.
func (c *Cluster) PeerPIDs() []int {
	var out []int
	for _, n := range c.nodes[1:] {
		if pid := n.srv.PID(); pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// Restart implements server.Server: every node with the new options, in
// the order the topology needs (Galera: the last node stopped bootstraps).
func (c *Cluster) Restart(ctx context.Context, startup []server.Setting) error {
	c.mu.Lock()
	c.startup = append([]server.Setting(nil), startup...)
	c.mu.Unlock()
	if c.existing {
		// Never restarted: each node checks its restart-only values and
		// applies the dynamic ones (put back when the run ends).
		for _, n := range c.nodes {
			if err := n.srv.Restart(ctx, startup); err != nil {
				return fmt.Errorf("%s: %w", n.Name, err)
			}
		}
		return nil
	}
	for i := len(c.nodes) - 1; i >= 0; i-- {
		if err := c.nodes[i].srv.Halt(2 * time.Minute); err != nil {
			return fmt.Errorf("%s: %w", c.nodes[i].Name, err)
		}
	}
	if err := c.kind.restart(ctx, c); err != nil {
		return err
	}
	for _, n := range c.nodes {
		c.setDown(n, false) // every node runs again (faults.go)
	}
	return nil
}

// Stop implements server.Server: every node, replicas first.
func (c *Cluster) Stop(ctx context.Context) error {
	var errs []error
	for i := len(c.nodes) - 1; i >= 0; i-- {
		n := c.nodes[i]
		if n.srv == nil {
			continue
		}
		_ = n.srv.Resume() // a paused node cannot act on SIGTERM
		if err := n.srv.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
		}
	}
	if err := c.docker.remove(); err != nil { // docker.go
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// open connects to a node for the cluster's own statements.
func open(n *Node) (*sql.DB, error) {
	cfg := n.Endpoint()
	cfg.Timeout = 5 * time.Second
	cfg.ReadTimeout = 2 * time.Minute
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	return db, nil
}

// exec runs statements on a node, naming the node in an error.
func exec(ctx context.Context, n *Node, stmts ...string) error {
	db, err := open(n)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %s: %w", n.Name, firstWords(s), err)
		}
	}
	return nil
}

// firstWords shortens a statement for an error message.
func firstWords(s string) string {
	f := strings.Fields(s)
	if len(f) > 4 {
		f = f[:4]
	}
	return strings.Join(f, " ")
}

// Apply sets the cell's dynamic variables on every node but the first
// (the runner sets them on node 1 and reads them back there).
func (c *Cluster) Apply(ctx context.Context, settings []server.Setting) error {
	for _, n := range c.nodes[1:] {
		if e, ok := externalOf(n); ok { // attach.go: remembered, put back
			if _, err := e.ApplyGlobals(ctx, settings); err != nil {
				return fmt.Errorf("%s: %w", n.Name, err)
			}
			continue
		}
		db, err := open(n)
		if err != nil {
			return err
		}
		_, err = server.ApplyGlobals(ctx, db, settings)
		db.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return nil
}
