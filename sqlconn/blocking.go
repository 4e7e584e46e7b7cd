package sqlconn

import (
	"context"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Blocking sockets. A Go read on a socket normally goes read → EAGAIN →
// park the goroutine → epoll_wait → wake → read again, and every park and
// wake also wakes the runtime's sysmon thread and spinning Ms: with one
// worker, oltp_insert made 6.7 syscalls per event (strace -c) where
// sysbench, which blocks in recv on its own thread, makes 4. A worker
// connection whose socket is in blocking mode instead waits inside read(2)
// like sysbench's threads: the goroutine keeps its M and P through the
// syscall and nothing else in the runtime wakes up.
//
// That only works when every blocked worker can keep a P: if the workers
// outnumber GOMAXPROCS, sysmon retakes the P of a goroutine that has been
// in a syscall for 20 µs and hands it to another, which costs far more than
// the netpoller. So a run uses blocking sockets only when its workers, and
// one P for the coordinator and everything else, fit: either a
// ProcReserver given by the caller makes room for them (the command raises
// GOMAXPROCS; a library holds no process-wide state and never changes it),
// or, without one, GOMAXPROCS already has room as it is. Runs with more
// than MaxBlockingThreads() workers keep the netpoller either way.

// blockingThreadsPerCPU bounds the runs that use blocking sockets: at most
// this many workers per CPU (and never more than 128, where stop-the-world
// and GC work grow with the number of Ps). Past it the netpoller wins,
// because one epoll_wait then returns many ready connections. Measured with
// bench-vs-sysbench on 2 CPUs, oltp_point_select tps and CPU/txn ratios to
// sysbench, netpoller → blocking: 8 threads 0.76/1.31 → 0.95/1.10, but
// 16 threads 0.91/1.13 → 0.87/1.26, 32 threads 0.93/1.08 → 0.85/1.26,
// 64 threads 1.01/0.92 → 0.85/1.23.
const blockingThreadsPerCPU = 4

// MaxBlockingThreads is the most workers a run puts on blocking sockets.
func MaxBlockingThreads() int { return min(blockingThreadsPerCPU*runtime.NumCPU(), 128) }

// ProcReserver makes room in the Go scheduler for workers that block in
// system calls, one P each (see the top of this file). It is how the
// process's owner (cmd/) lets a run use blocking sockets with more workers
// than GOMAXPROCS has room for; the engine itself never changes
// GOMAXPROCS.
type ProcReserver interface {
	// Reserve makes room for n more goroutines that each block in a
	// system call on their own P: GOMAXPROCS becomes at least one more
	// than the sum of n over the reservations held. It returns the
	// function that gives the room back; the engine calls it once, when
	// the run ends. Reservations of concurrent runs may overlap.
	Reserve(n int) (release func())
}

// ProcReserverFunc adapts a function to ProcReserver.
type ProcReserverFunc func(n int) (release func())

// Reserve calls f(n).
func (f ProcReserverFunc) Reserve(n int) func() { return f(n) }

var _ ProcReserver = ProcReserverFunc(nil)

// UseBlocking tells whether a run with threads workers on cfg uses
// blocking sockets: not with read/write timeouts (a blocked read(2) does
// not see deadlines) nor a caller's own dialer, and only when every worker
// gets a P: through procs, or without it when GOMAXPROCS (read, never
// set) already has one per worker and one more. Runs without procs do not
// see each other: two at once in one process may together exceed it.
func UseBlocking(cfg *mysql.Config, threads int, procs ProcReserver) bool {
	if threads > MaxBlockingThreads() || cfg.ReadTimeout > 0 || cfg.WriteTimeout > 0 || cfg.DialFunc != nil {
		return false
	}
	if procs == nil && threads+1 > runtime.GOMAXPROCS(0) {
		return false
	}
	return plainNet(cfg.Net)
}

// DialBlocking dials like the driver does, then moves the socket out of
// Go's netpoller: it duplicates the descriptor, closes the original (which
// removes it from epoll; otherwise every packet still wakes the thread
// waiting in epoll_wait) and puts the duplicate in blocking mode behind an
// *os.File, whose Read and Write are plain read(2) and write(2) calls that
// wait in the kernel. When any step fails the ordinary connection is kept.
// It has the driver's dial signature (mysql.RegisterDialContext); the
// slap clients use it too.
func DialBlocking(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nc, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nc, nil
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = syscall.Dup(int(s)) }); err != nil || derr != nil {
		return nc, nil
	}
	syscall.CloseOnExec(fd)
	laddr, raddr := nc.LocalAddr(), nc.RemoteAddr()
	nc.Close() // the duplicate keeps the socket open
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	// A blocking descriptor is not pollable, so os.NewFile leaves it out
	// of the netpoller.
	f := os.NewFile(uintptr(fd), network+":"+addr)
	return &blockingConn{File: f, fd: fd, laddr: laddr, raddr: raddr}, nil
}

// blockingConn is a net.Conn over a socket in blocking mode. The *os.File
// reference-counts the descriptor, so a Close during a Read cannot let the
// reader reach a reused descriptor number; Close first shuts the socket
// down, which wakes a reader blocked in read(2). Deadlines are not
// supported (os.File returns ErrNoDeadline); UseBlocking rules out the
// configurations that set them.
type blockingConn struct {
	*os.File
	fd           int
	laddr, raddr net.Addr
	once         sync.Once
	err          error
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.laddr }
func (c *blockingConn) RemoteAddr() net.Addr { return c.raddr }

func (c *blockingConn) Close() error {
	c.once.Do(func() {
		syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
		c.err = c.File.Close()
	})
	return c.err
}

// yieldEvery is how often a worker passes through the scheduler (checked
// before each statement, as an event may take longer than 10 ms). A
// worker on a blocking socket (blocking.go) otherwise never does: it
// alternates between Go code and read(2) without parking, so its P's
// scheduling tick never moves, and after 10 ms the runtime's sysmon takes
// it for a goroutine hogging the P, retakes the P at every 20 µs check
// while it sits in read(2) and hands it to another thread. That cost 18 µs
// of CPU per oltp_insert event in the sysmon thread alone, and moved the
// worker between threads. A Gosched every few milliseconds resets the
// tick for the price of one scheduler pass, which often wakes an idle M
// (wakep): every 2 ms that was 0.12 futex calls per point_select event at
// 8 threads, every 5 ms 0.07, safely inside sysmon's 10 ms.
const yieldEvery = 5 * time.Millisecond

// yield passes through the scheduler when the connection has not done so
// for yieldEvery.
func (c *Conn) yield() {
	if now := time.Now(); now.Sub(c.yielded) > yieldEvery {
		runtime.Gosched()
		c.yielded = now
	}
}
