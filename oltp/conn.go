package oltp

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"benchmatrix/sqlconn"

	"github.com/go-sql-driver/mysql"
)

// The engine's connection is sqlconn's (shared with tpcc): one driver
// connection per worker, no database/sql, sysbench's statement counters.
// These are its names inside the engine.

// conn is one worker's connection with its counters (conn.Cnt).
type conn struct{ *sqlconn.Conn }

type (
	counts = sqlconn.Counts
	stmt   = sqlconn.Stmt
)

var (
	newStmt    = sqlconn.NewStmt
	isConnLost = sqlconn.IsConnLost
	// lostConnErrnos: the client error numbers that mean the connection
	// is gone (sysbench's list).
	lostConnErrnos = sqlconn.LostConnErrnos
)

// Errno is the MySQL error number of err, or 0.
func Errno(err error) uint16 { return sqlconn.Errno(err) }

// newConnector returns a driver connector for cfg (sqlconn.NewConnector).
func newConnector(cfg *mysql.Config, blocking bool) (driver.Connector, error) {
	return sqlconn.NewConnector(cfg, blocking)
}

// openDB opens a small pool on cfg for prepare, prewarm and cleanup.
func openDB(cfg *mysql.Config, conns int) (*sql.DB, error) { return sqlconn.OpenDB(cfg, conns) }

// dial opens a connection.
func dial(ctx context.Context, cn driver.Connector) (*conn, error) {
	c, err := sqlconn.Dial(ctx, cn)
	if err != nil {
		return nil, err
	}
	return &conn{c}, nil
}

func (c *conn) close() {
	if c != nil {
		c.Conn.Close()
	}
}
func (c *conn) prepare(s *stmt) error             { return c.Prepare(s) }
func (c *conn) run(s *stmt) error                 { return c.Run(s) }
func (c *conn) query(sql string, read bool) error { return c.Query(sql, read) }

// appendQuoted appends s as a quoted SQL string literal.
func appendQuoted(dst, s []byte) []byte { return sqlconn.AppendQuoted(dst, s) }
