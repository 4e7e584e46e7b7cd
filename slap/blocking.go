package slap

import (
	"context"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
)

// Blocking sockets, as the oltp engine uses them (oltp/blocking.go says
// why): a client of mariadb-slap waits for the server inside recv(2) on its
// own thread; a Go read normally parks the goroutine and goes through
// epoll, which on a 2-CPU host doubled the time of a read load's 1000
// queries (99 rows each) against mariadb-slap's. When every client can
// keep a P (clients + 1 <= GOMAXPROCS, never changed here), the clients'
// connections wait in read(2) instead.

// blockingDial dials, then takes the socket out of the netpoller: the
// descriptor is duplicated, the pollable original closed, and the
// duplicate set to blocking behind an *os.File (plain read(2)/write(2)).
// On any failure the ordinary connection is returned.
func blockingDial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nc, nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nc, nil
	}
	fd, derr := -1, error(nil)
	if err := raw.Control(func(s uintptr) { fd, derr = syscall.Dup(int(s)) }); err != nil || derr != nil {
		return nc, nil
	}
	syscall.CloseOnExec(fd)
	local, remote := nc.LocalAddr(), nc.RemoteAddr()
	nc.Close()
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &fileConn{File: os.NewFile(uintptr(fd), network+":"+addr), fd: fd, local: local, remote: remote}, nil
}

// fileConn is a net.Conn over a blocking socket; it has no deadlines, so
// it is only used without read and write timeouts.
type fileConn struct {
	*os.File
	fd            int
	local, remote net.Addr
	once          sync.Once
	err           error
}

func (c *fileConn) LocalAddr() net.Addr  { return c.local }
func (c *fileConn) RemoteAddr() net.Addr { return c.remote }

// Close shuts the socket down first, which wakes a reader blocked in read(2).
func (c *fileConn) Close() error {
	c.once.Do(func() {
		_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
		c.err = c.File.Close()
	})
	return c.err
}

// canBlock: every client keeps a P while it waits in read(2), with one P
// to spare for everything else.
func canBlock(clients int) bool { return clients+1 <= runtime.GOMAXPROCS(0) }
