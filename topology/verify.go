package topology

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TableCheck is one table on one node: its row count and CHECKSUM TABLE.
type TableCheck struct {
	Table    string `json:"table"`
	Rows     int64  `json:"rows"`
	Checksum int64  `json:"checksum"`
}

// NodeCheck is what one node holds of the workload's tables.
type NodeCheck struct {
	Node   string       `json:"node"`
	Tables []TableCheck `json:"tables"`
	// CaughtUpSeconds is how long the node took to apply what the
	// primary had committed when the check began.
	CaughtUpSeconds float64 `json:"caught_up_seconds"`
}

// Check is a comparison of every node's data.
type Check struct {
	When  string      `json:"when"` // "after loading", "after the cell"
	Nodes []NodeCheck `json:"nodes"`
	Equal bool        `json:"equal"`
	// Differences name the node and table that differ from node 1.
	Differences []string `json:"differences,omitempty"`
}

// Verify waits until every node has applied what the primary committed,
// then compares each table's row count and CHECKSUM TABLE on every node
// with node 1's. Run it while no workload writes. Transactions whose
// client was cut at the end of a cell may still be committing: a
// difference is checked again a few times, a second apart, and only one
// that stays is reported.
func (c *Cluster) Verify(ctx context.Context, schema string, tables []string, when string, timeout time.Duration) (*Check, error) {
	var ck *Check
	var err error
	for attempt := 0; attempt < verifyAttempts; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Second):
			}
		}
		if ck, err = c.verifyOnce(ctx, schema, tables, when, timeout); err != nil || ck.Equal {
			return ck, err
		}
	}
	return ck, nil
}

// verifyAttempts is how many times Verify compares before it reports a
// difference.
const verifyAttempts = 5

func (c *Cluster) verifyOnce(ctx context.Context, schema string, tables []string, when string, timeout time.Duration) (*Check, error) {
	ck := &Check{When: when, Equal: true}
	sort.Strings(tables)
	target, err := c.kind.checkTarget(ctx, c)
	if err != nil {
		return nil, err
	}
	for i, n := range c.nodes {
		nc, err := c.checkNode(ctx, n, i == 0, schema, tables, target, timeout)
		if err != nil {
			return nil, err
		}
		ck.Nodes = append(ck.Nodes, *nc)
	}
	base := ck.Nodes[0]
	for _, nc := range ck.Nodes[1:] {
		for j, t := range nc.Tables {
			b := base.Tables[j]
			if t.Rows != b.Rows || t.Checksum != b.Checksum {
				ck.Equal = false
				ck.Differences = append(ck.Differences, fmt.Sprintf("%s %s: %d rows (checksum %d), node1 %d rows (checksum %d)",
					nc.Node, t.Table, t.Rows, t.Checksum, b.Rows, b.Checksum))
			}
		}
	}
	return ck, nil
}

func (c *Cluster) checkNode(ctx context.Context, n *Node, primary bool, schema string, tables []string, target string, timeout time.Duration) (*NodeCheck, error) {
	db, err := open(n)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one session: wsrep_sync_wait holds for it
	nc := &NodeCheck{Node: n.Name}
	start := time.Now()
	if !primary {
		if err := c.kind.caughtUp(ctx, c, n, db, target, timeout); err != nil {
			return nil, err
		}
	}
	for _, t := range tables {
		q := "`" + schema + "`.`" + t + "`"
		var tc TableCheck
		tc.Table = t
		if err := untilSettled(ctx, start.Add(timeout), func() error {
			return db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+q).Scan(&tc.Rows)
		}); err != nil {
			return nil, fmt.Errorf("%s: count %s: %w", n.Name, t, err)
		}
		var name string
		var sum sql.NullInt64
		if err := untilSettled(ctx, start.Add(timeout), func() error {
			return db.QueryRowContext(ctx, "CHECKSUM TABLE "+q).Scan(&name, &sum)
		}); err != nil {
			return nil, fmt.Errorf("%s: CHECKSUM TABLE %s: %w", n.Name, t, err)
		}
		if !sum.Valid {
			return nil, fmt.Errorf("%s: CHECKSUM TABLE %s: the table is missing", n.Name, t)
		}
		tc.Checksum = sum.Int64
		nc.Tables = append(nc.Tables, tc)
		if nc.CaughtUpSeconds == 0 {
			nc.CaughtUpSeconds = time.Since(start).Seconds()
		}
	}
	return nc, nil
}

// Summary is one line for the log and the cell's notes.
func (ck *Check) Summary() string {
	if ck.Equal {
		var rows int64
		for _, t := range ck.Nodes[0].Tables {
			rows += t.Rows
		}
		return fmt.Sprintf("data %s: equal on %d nodes (%d table(s), %d rows, CHECKSUM TABLE)", ck.When, len(ck.Nodes), len(ck.Nodes[0].Tables), rows)
	}
	return fmt.Sprintf("data %s: NOT equal: %s", ck.When, strings.Join(ck.Differences, "; "))
}

// untilSettled runs a read of the data check again while the node answers
// that it is still catching up: a lock wait or causal-read timeout (1205,
// which a Galera node that was paused gives while it applies its backlog
// under wsrep_sync_wait), a deadlock with the applier (1213), or not ready
// (1047). Any other error, or the deadline, ends it.
func untilSettled(ctx context.Context, deadline time.Time, read func() error) error {
	for {
		err := read()
		var me *mysql.MySQLError
		if err == nil || !errors.As(err, &me) || (me.Number != 1205 && me.Number != 1213 && me.Number != 1047) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}
