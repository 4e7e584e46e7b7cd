package topology

import (
	"context"
	"fmt"
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

func (c *Cluster) openReplicas(ctx context.Context) error {
	t := c.cfg.Topology
	for i := 1; i <= 1+t.Replicas; i++ {
		n := &Node{Name: "node" + strconv.Itoa(i), Role: Replica}
		if i == 1 {
			n.Role = Primary
		}
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
