package oltp

import (
	"benchmatrix/sqlconn"

	"github.com/go-sql-driver/mysql"
)

// Blocking sockets are sqlconn's (sqlconn/blocking.go says when and why).

func maxBlockingThreads() int { return sqlconn.MaxBlockingThreads() }

func useBlocking(cfg *mysql.Config, threads int, procs sqlconn.ProcReserver) bool {
	return sqlconn.UseBlocking(cfg, threads, procs)
}
