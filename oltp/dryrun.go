package oltp

// --mysql-dry-run, as sysbench 1.0.20's MySQL driver does it: no
// connection is made and no statement is sent; every statement succeeds at
// once and counts as "other" (the driver reports no result set and no
// changed rows). The command line marks the configuration with the
// network name dryRunNet; newConnector then hands out dryConns, and conn
// short-circuits on them. Only run supports it here (prepare, prewarm and
// cleanup read answers from the server).

import (
	"context"
	"database/sql/driver"
	"errors"
)

// dryRunNet is the mysql.Config network of a dry run.
const dryRunNet = "benchmatrix-dry-run"

var errDryRun = errors.New("--mysql-dry-run: no server")

type dryConnector struct{}

func (dryConnector) Connect(context.Context) (driver.Conn, error) { return dryConn{}, nil }
func (dryConnector) Driver() driver.Driver                        { return dryDriver{} }

type dryDriver struct{}

func (dryDriver) Open(string) (driver.Conn, error) { return dryConn{}, nil }

// dryConn is a connection to nowhere. conn never calls its statement
// methods (it counts and returns first); they fail for any other caller.
type dryConn struct{}

func (dryConn) Prepare(string) (driver.Stmt, error) { return nil, errDryRun }
func (dryConn) Close() error                        { return nil }
func (dryConn) Begin() (driver.Tx, error)           { return nil, errDryRun }
func (dryConn) Exec(string, []driver.Value) (driver.Result, error) {
	return nil, errDryRun
}
func (dryConn) Query(string, []driver.Value) (driver.Rows, error) { return nil, errDryRun }
