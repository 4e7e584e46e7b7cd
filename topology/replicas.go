package topology

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strconv"
	"time"

	"benchmatrix/observe"
	"benchmatrix/server"
)

// A primary and N replicas: MariaDB's GTID replication (MASTER_USE_GTID =
// slave_pos), every node with its binary log, each replica reading from
// the primary's loopback port as root (the sandboxes' only account). With
// semi_sync the primary waits at each commit until one replica has the
// transaction (rpl_semi_sync_master_enabled; MariaDB 10.3+ has it built
// in), and falls back to asynchronous after rpl_semi_sync_master_timeout.

// replicas is the kind (catalog.TopologyReplicas).
type replicas struct{}

func (replicas) open(ctx context.Context, c *Cluster) error    { return c.openReplicas(ctx) }
func (replicas) restart(ctx context.Context, c *Cluster) error { return c.restartReplicas(ctx) }
func (replicas) checkExisting(ctx context.Context, c *Cluster, log io.Writer) error {
	return c.checkReplicas(ctx, log) // attach.go
}
func (replicas) refreshJoin(*Cluster, *Node)                      {}
func (replicas) heal(context.Context, *Cluster) ([]string, error) { return nil, nil }

// rejoined: a primary started again (on docker, maybe at a new address)
// has its replicas pointed at it again; a replica must replicate again.
func (replicas) rejoined(ctx context.Context, c *Cluster, n *Node) error {
	if n == c.nodes[0] {
		return c.repointReplicas(ctx) // docker.go
	}
	return c.waitReplicasRunning(ctx)
}

// checkTarget is the primary's binary log position (GTID).
func (replicas) checkTarget(ctx context.Context, c *Cluster) (string, error) {
	db, err := open(c.nodes[0])
	if err != nil {
		return "", err
	}
	defer db.Close()
	var target string
	if err := db.QueryRowContext(ctx, "SELECT @@global.gtid_binlog_pos").Scan(&target); err != nil {
		return "", fmt.Errorf("node1: read gtid_binlog_pos: %w", err)
	}
	return target, nil
}

// caughtUp waits until the replica applied the primary's transactions.
func (replicas) caughtUp(ctx context.Context, _ *Cluster, n *Node, db *sql.DB, target string, timeout time.Duration) error {
	var res sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, ?)", target, timeout.Seconds()).Scan(&res); err != nil {
		return fmt.Errorf("%s: wait for GTID %s: %w", n.Name, target, err)
	}
	if !res.Valid || res.Int64 != 0 {
		st, _ := ReplicaStatus(ctx, n)
		return fmt.Errorf("%s did not apply the primary's transactions (up to GTID %s) within %s; replica: IO %s, SQL %s %s%s",
			n.Name, target, timeout, st["Slave_IO_Running"], st["Slave_SQL_Running"], st["Last_IO_Error"], st["Last_SQL_Error"])
	}
	return nil
}

func (c *Cluster) openReplicas(ctx context.Context) error {
	t := c.cfg.Topology
	for i := 1; i <= t.NodeCount(); i++ {
		n := c.newNode(i)
		n.opts = []server.Setting{
			{Name: "server_id", Value: strconv.Itoa(i)},
			{Name: "log_bin", Value: "binlog"},
			{Name: "binlog_format", Value: "ROW"},
			{Name: "relay_log", Value: "relay"},
			{Name: "log_slave_updates", Value: "ON"},
		}
		if t.SemiSync {
			if i == 1 {
				n.opts = append(n.opts, server.Setting{Name: "rpl_semi_sync_master_enabled", Value: "ON"})
			} else {
				n.opts = append(n.opts, server.Setting{Name: "rpl_semi_sync_slave_enabled", Value: "ON"})
			}
		}
		n.join = n.opts
		c.nodes = append(c.nodes, n)
		fmt.Fprintf(c.cfg.Log, "  starting %s (%s)\n", n.Name, n.Role)
		if err := c.startNode(ctx, n, ""); err != nil {
			return err
		}
	}
	for _, n := range c.nodes[1:] {
		if err := c.replicate(ctx, n); err != nil {
			return err
		}
	}
	return c.waitReplicasRunning(ctx)
}

// replicate points a replica at the primary and starts it.
func (c *Cluster) replicate(ctx context.Context, n *Node) error {
	host, port, pw, err := c.primaryAddr() // docker.go
	if err != nil {
		return err
	}
	return exec(ctx, n,
		"STOP SLAVE",
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='%s', MASTER_PORT=%d, MASTER_USER='root', MASTER_PASSWORD='%s', "+
			"MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=slave_pos", host, port, pw),
		"START SLAVE")
}

// waitReplicasRunning waits until every replica's IO and SQL threads run,
// and reports the replica's own error when one stopped.
func (c *Cluster) waitReplicasRunning(ctx context.Context) error {
	deadline := time.Now().Add(c.cfg.ReadyTimeout)
	for _, n := range c.nodes[1:] {
		for {
			st, err := ReplicaStatus(ctx, n)
			if err == nil && st["Slave_IO_Running"] == "Yes" && st["Slave_SQL_Running"] == "Yes" {
				break
			}
			if err == nil && (st["Last_SQL_Error"] != "" || st["Last_IO_Error"] != "") && st["Slave_SQL_Running"] != "Yes" {
				return fmt.Errorf("%s: replication stopped: %s%s", n.Name, st["Last_IO_Error"], st["Last_SQL_Error"])
			}
			if time.Now().After(deadline) {
				if err == nil {
					err = fmt.Errorf("IO thread %q, SQL thread %q: %s%s", st["Slave_IO_Running"], st["Slave_SQL_Running"], st["Last_IO_Error"], st["Last_SQL_Error"])
				}
				return fmt.Errorf("%s: replication did not start within %s: %w", n.Name, c.cfg.ReadyTimeout, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// restartReplicas starts the primary, then the replicas (which resume
// replication from their GTID position by themselves).
func (c *Cluster) restartReplicas(ctx context.Context) error {
	for _, n := range c.nodes {
		if err := n.srv.Restart(ctx, append(c.Startup(), n.opts...)); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	if err := c.repointReplicas(ctx); err != nil { // docker.go
		return err
	}
	return c.waitReplicasRunning(ctx)
}

// ReplicaStatus is SHOW SLAVE STATUS of a node, by column name (empty on
// a node that is not a replica).
func ReplicaStatus(ctx context.Context, n *Node) (map[string]string, error) {
	db, err := open(n)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return observe.QueryRow(ctx, db, "SHOW SLAVE STATUS")
}

func splitAddr(addr string) (string, int, error) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			p, err := strconv.Atoi(addr[i+1:])
			return addr[:i], p, err
		}
	}
	return addr, 0, fmt.Errorf("no port in %q", addr)
}
