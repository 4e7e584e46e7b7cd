package slap

import "runtime"

// Blocking sockets, as the oltp engine uses them, dialed by the engine's
// sqlconn.DialBlocking (sqlconn/blocking.go says why): a client of
// mariadb-slap waits for the server inside recv(2) on its own thread; a Go read normally parks the goroutine and goes through
// epoll, which on a 2-CPU host doubled the time of a read load's 1000
// queries (99 rows each) against mariadb-slap's. When every client can
// keep a P (clients + 1 <= GOMAXPROCS, never changed here), the clients'
// connections wait in read(2) instead.

// canBlock: every client keeps a P while it waits in read(2), with one P
// to spare for everything else.
func canBlock(clients int) bool { return clients+1 <= runtime.GOMAXPROCS(0) }
