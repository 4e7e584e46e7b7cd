package sqlconn

// --mysql-dry-run, as sysbench 1.0.20's MySQL driver does it: no
// connection is made and no statement is sent; every statement succeeds at
// once and counts as "other" (the driver reports no result set and no
// changed rows). A command line marks the configuration with the network
// name DryRunNet; NewConnector then hands out dryConns, and Conn
// short-circuits on them.

import (
	"context"
	"database/sql/driver"
	"errors"
)

// DryRunNet is the mysql.Config network of a dry run.
const DryRunNet = "benchmatrix-dry-run"

var errDryRun = errors.New("--mysql-dry-run: no server")

type dryConnector struct{}

func (dryConnector) Connect(context.Context) (driver.Conn, error) { return dryConn{}, nil }
func (dryConnector) Driver() driver.Driver                        { return dryDriver{} }

type dryDriver struct{}

func (dryDriver) Open(string) (driver.Conn, error) { return dryConn{}, nil }

// dryConn is a connection to nowhere. Conn never calls its statement
// methods (it counts and returns first); they fail for any other caller.
type dryConn struct{}

func (dryConn) Prepare(string) (driver.Stmt, error) { return nil, errDryRun }
func (dryConn) Close() error                        { return nil }
func (dryConn) Begin() (driver.Tx, error)           { return nil, errDryRun }
func (dryConn) Exec(string, []driver.Value) (driver.Result, error) {
	return nil, errDryRun
}
func (dryConn) Query(string, []driver.Value) (driver.Rows, error) { return nil, errDryRun }
