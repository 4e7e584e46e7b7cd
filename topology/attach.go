package topology

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"benchmatrix/exitcode"
	"benchmatrix/observe"
	"benchmatrix/server"
)

// Existing topologies: provider external with one DSN per node. The nodes
// are servers someone else runs, already replicating: Attach connects to
// each (a server.External: every global it changes is put back, and a
// killed run's changes are put back by the next), checks that they are the
// topology the manifest declares (each replica replicating from node 1,
// semi-sync as declared; every Galera node Synced in one cluster), and
// from then on the Cluster samples, verifies and sets variables on them as
// on a started one. It never stops, pauses or rebuilds a node: the
// manifest may not have events, and Restart only checks and re-applies.

// Attached is a Cluster of existing servers. Beside the Cluster's methods
// it is a server.Borrowed, as one external server is: globals applied
// and put back on every node, restart-only values checked on every node,
// the workload's tables checked and claimed on node 1 (they replicate).
type Attached struct{ *Cluster }

var _ interface {
	server.Server
	server.Borrowed
} = (*Attached)(nil)

// Of is the cluster a server is, started or attached; nil for one server.
func Of(srv server.Server) *Cluster {
	switch c := srv.(type) {
	case *Cluster:
		return c
	case *Attached:
		return c.Cluster
	}
	return nil
}

// borrowedNode is an existing server as a node: never stopped or paused.
type borrowedNode struct{ *server.External }

var errNotOwned = errors.New("benchmatrix never stops or pauses a server it does not own")

func (borrowedNode) Halt(time.Duration) error { return errNotOwned }
func (borrowedNode) Crash()                   {}
func (borrowedNode) Pause() error             { return errNotOwned }
func (borrowedNode) Resume() error            { return nil } // never paused

// Alive: an existing server's process is out of sight; a node that stops
// answering shows in the data check and Heal.
func (borrowedNode) Alive() bool { return true }
func (borrowedNode) PID() int    { return 0 }

// mismatchError is an existing topology that is not what the manifest
// declares or the DSNs name: their count or order, semi-sync, a server of
// another kind or cluster, one server given twice. It is the user's input
// to correct, not a failure of the servers: Attach, which finds it before
// anything ran, gives it exit code 2 (inputClass). Found again between
// cells (Heal: the servers changed under the run) it fails the cell as any
// other error does.
type mismatchError struct{ err error }

func (e *mismatchError) Error() string { return e.err.Error() }
func (e *mismatchError) Unwrap() error { return e.err }

func mismatchf(format string, a ...any) error {
	return &mismatchError{err: fmt.Errorf(format, a...)}
}

// inputClass is Attach's error with its exit code: 2 (invalid input) for
// a mismatch, as it came for anything else (a server that does not
// answer, replication that is not running).
func inputClass(err error) error {
	var m *mismatchError
	if errors.As(err, &m) {
		return exitcode.UsageError(err)
	}
	return err
}

// Attach connects to the existing nodes cfg.DSNs (node 1 first) and checks
// they form cfg.Topology. Every connection is closed again when it fails.
// A topology that is not the declared one is an input error (exit 2).
func Attach(ctx context.Context, cfg Config) (_ *Attached, err error) {
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 2 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if want := cfg.Topology.NodeCount(); len(cfg.DSNs) != want {
		return nil, inputClass(mismatchf("the %s topology has %d nodes, and %d DSNs were given: one per node, node 1 first", cfg.Topology.Kind, want, len(cfg.DSNs)))
	}
	// No startup options yet: the runner's first Restart checks and
	// applies them, as on one external server.
	c := &Cluster{cfg: cfg, existing: true}
	if c.kind, err = kindOf(cfg.Topology); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			_ = c.Stop(sctx)
		}
	}()
	for i, dsn := range cfg.DSNs {
		n := c.newNode(i + 1)
		e, err := server.ConnectExternal(ctx, server.ExternalConfig{DSN: dsn})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
		// What connecting put back (Recovered) the runner reports.
		n.srv = borrowedNode{e}
		c.nodes = append(c.nodes, n)
	}
	if err := c.checkExisting(ctx, cfg.Log); err != nil {
		return nil, inputClass(err)
	}
	return &Attached{c}, nil
}

// checkExisting checks that the nodes are the declared topology, as it
// runs now: Attach's check (saying what it found in log), and Heal's
// between cells.
func (c *Cluster) checkExisting(ctx context.Context, log io.Writer) error {
	return c.kind.checkExisting(ctx, c, log)
}

// where names a node and its address for an error.
func where(n *Node) string { return n.Name + " (" + n.srv.Info().Address + ")" }

func (c *Cluster) checkReplicas(ctx context.Context, log io.Writer) error {
	primary := c.nodes[0]
	vars, err := nodeVariables(ctx, primary, "server_id", "rpl_semi_sync_master_enabled", "rpl_semi_sync_source_enabled")
	if err != nil {
		return fmt.Errorf("%s: %w", where(primary), err)
	}
	id := vars["server_id"]
	if st, err := replicaStatus(ctx, primary); err == nil && len(st) > 0 {
		fmt.Fprintf(log, "  %s is itself a replica of server_id %s: the workload writes on it all the same\n", where(primary), st["Master_Server_Id"])
	}
	semiVar := "rpl_semi_sync_master_enabled"
	semi, known := vars[semiVar]
	if !known {
		semiVar = "rpl_semi_sync_source_enabled" // MySQL 8.0.26+'s plugin
		semi, known = vars[semiVar]
	}
	on := strings.EqualFold(semi, "ON") || semi == "1"
	switch want := c.cfg.Topology.SemiSync; {
	case want && !known:
		return mismatchf("%s: semi_sync = true, but the primary has no rpl_semi_sync_master_enabled (nor rpl_semi_sync_source_enabled): its semi-synchronous replication is not installed", where(primary))
	case want != on && known:
		return mismatchf("%s: %s is %s, and the manifest says semi_sync = %t: benchmatrix does not change how someone else's servers replicate; say semi_sync = %t",
			where(primary), semiVar, semi, want, on)
	}
	for _, n := range c.nodes[1:] {
		st, err := replicaStatus(ctx, n)
		if err != nil {
			return fmt.Errorf("%s: %w", where(n), err)
		}
		if len(st) == 0 {
			return mismatchf("%s is not a replica (SHOW SLAVE STATUS is empty): list the primary first, then its replicas", where(n))
		}
		if src := st["Master_Server_Id"]; src != id {
			return mismatchf("%s replicates from server_id %s, but node 1 %s has server_id %s: list the primary first, then its replicas", where(n), src, where(primary), id)
		}
		if st["Slave_IO_Running"] != "Yes" || st["Slave_SQL_Running"] != "Yes" {
			return fmt.Errorf("%s: replication is not running (IO thread %s, SQL thread %s)%s", where(n), st["Slave_IO_Running"], st["Slave_SQL_Running"],
				lastErrors(st))
		}
		fmt.Fprintf(log, "  %s: replica of node1 (server_id %s), IO and SQL threads running\n", where(n), id)
	}
	return nil
}

func lastErrors(st map[string]string) string {
	var out []string
	for _, k := range []string{"Last_IO_Error", "Last_SQL_Error"} {
		if st[k] != "" {
			out = append(out, k+": "+st[k])
		}
	}
	if len(out) == 0 {
		return ""
	}
	return ": " + strings.Join(out, "; ")
}

func (c *Cluster) checkGalera(ctx context.Context, log io.Writer) error {
	uuid := ""
	seen := map[string]string{} // wsrep_gcomm_uuid: node name
	for _, n := range c.nodes {
		st, err := nodeStatus(ctx, n, "wsrep_ready", "wsrep_cluster_state_uuid", "wsrep_local_state_comment", "wsrep_cluster_size", "wsrep_gcomm_uuid")
		if err != nil {
			return fmt.Errorf("%s: %w", where(n), err)
		}
		if st["wsrep_cluster_state_uuid"] == "" || st["wsrep_ready"] != "ON" {
			return mismatchf("%s is not a Galera node in a cluster (wsrep_ready %q, wsrep_cluster_state_uuid %q)", where(n), st["wsrep_ready"], st["wsrep_cluster_state_uuid"])
		}
		if uuid == "" {
			uuid = st["wsrep_cluster_state_uuid"]
		} else if st["wsrep_cluster_state_uuid"] != uuid {
			return mismatchf("%s is in another cluster than node1 (wsrep_cluster_state_uuid %s, node1's %s)", where(n), st["wsrep_cluster_state_uuid"], uuid)
		}
		if g := st["wsrep_gcomm_uuid"]; g != "" {
			if other, dup := seen[g]; dup {
				return mismatchf("%s and %s are the same server (wsrep_gcomm_uuid %s): give each node's own DSN", other, where(n), g)
			}
			seen[g] = where(n)
		}
		if st["wsrep_local_state_comment"] != "Synced" {
			return fmt.Errorf("%s is %s, not Synced", where(n), st["wsrep_local_state_comment"])
		}
		size, _ := strconv.Atoi(st["wsrep_cluster_size"])
		if size > len(c.nodes) && c.size != size {
			fmt.Fprintf(log, "  the cluster has %d members; %d are given and sampled\n", size, len(c.nodes))
		}
		c.size = size
	}
	fmt.Fprintf(log, "  %d Galera nodes Synced in cluster %s\n", len(c.nodes), uuid)
	return nil
}

// nodeVariables reads some global variables of a node (those it has).
func nodeVariables(ctx context.Context, n *Node, names ...string) (map[string]string, error) {
	db, err := open(n)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return server.Variables(ctx, db, names...)
}

// replicaStatus is ReplicaStatus with MySQL 8's names (SHOW REPLICA
// STATUS: Replica_IO_Running, Source_Server_Id) given MariaDB's.
func replicaStatus(ctx context.Context, n *Node) (map[string]string, error) {
	db, err := open(n)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	st, err := observe.QueryRow(ctx, db, "SHOW REPLICA STATUS")
	if err != nil {
		st, err = observe.QueryRow(ctx, db, "SHOW SLAVE STATUS")
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(st))
	for k, v := range st {
		k = strings.Replace(k, "Replica_", "Slave_", 1)
		k = strings.Replace(k, "Source_", "Master_", 1)
		out[k] = v
	}
	return out, nil
}

// Borrowed, node by node.

// ApplyGlobals implements server.Borrowed on node 1 (the runner's
// configure; Apply sets the other nodes).
func (a *Attached) ApplyGlobals(ctx context.Context, settings []server.Setting) (map[string]string, error) {
	return a.borrowed(a.nodes[0]).ApplyGlobals(ctx, settings)
}

// VerifyStartup implements server.Borrowed on every node.
func (a *Attached) VerifyStartup(ctx context.Context, startup []server.Setting) error {
	var errs []error
	for _, n := range a.nodes {
		if err := a.borrowed(n).VerifyStartup(ctx, startup); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// ForeignTables implements server.Borrowed on node 1: the workload's
// tables and benchmatrix's ledger replicate to every node.
func (a *Attached) ForeignTables(ctx context.Context, schema string, ours func(string) bool) ([]string, error) {
	return a.borrowed(a.nodes[0]).ForeignTables(ctx, schema, ours)
}

// Claim implements server.Borrowed on node 1.
func (a *Attached) Claim(ctx context.Context, schema string, tables []string) error {
	return a.borrowed(a.nodes[0]).Claim(ctx, schema, tables)
}

// Recovered implements server.Borrowed: what connecting put back on any
// node, named.
func (a *Attached) Recovered() []string {
	var out []string
	for _, n := range a.nodes {
		for _, r := range a.borrowed(n).Recovered() {
			out = append(out, n.Name+": "+r)
		}
	}
	return out
}

func (a *Attached) borrowed(n *Node) *server.External { return n.srv.(borrowedNode).External }

// externalOf is a node's server when it is an existing one.
func externalOf(n *Node) (*server.External, bool) {
	b, ok := n.srv.(borrowedNode)
	if !ok {
		return nil, false
	}
	return b.External, true
}
