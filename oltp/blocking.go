package oltp

import (
	"benchmatrix/sqlconn"

	"github.com/go-sql-driver/mysql"
)

// Blocking sockets are sqlconn's (sqlconn/blocking.go says when and why).

// ProcReserver makes room in the Go scheduler for workers that block in
// system calls (sqlconn.ProcReserver).
type ProcReserver = sqlconn.ProcReserver

// DialBlocking dials a connection whose socket is in blocking mode
// (sqlconn.DialBlocking); the slap clients use it too.
var DialBlocking = sqlconn.DialBlocking

func maxBlockingThreads() int { return sqlconn.MaxBlockingThreads() }

func useBlocking(cfg *mysql.Config, threads int, procs ProcReserver) bool {
	return sqlconn.UseBlocking(cfg, threads, procs)
}
