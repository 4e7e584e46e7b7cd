package sqlconn

import (
	"context"
	"errors"
	"net"
	"sync"
)

// A Link is the socket under one worker's current connection, for a
// coordinator that must end statements stuck in flight (a forced
// shutdown, a run interrupted): it closes the socket, so that the
// blocked read(2) or netpoller wait returns with an error. Closing the
// socket, not the driver connection: go-sql-driver's Close writes
// COM_QUIT and tears down state that the worker's goroutine is using,
// which is not safe while that goroutine waits in a read. Every
// connection of NewConnector is dialled by LinkedDial, which records the
// net.Conn in the Link of the context it was dialled with (WithLink).
type Link struct {
	mu  sync.Mutex
	nc  net.Conn
	cut bool
}

// ErrCut is what a dial returns once its Link has been severed.
var ErrCut = errors.New("connection cut by the forced shutdown")

// Attach records nc as the worker's socket; after Sever it refuses.
func (l *Link) Attach(nc net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cut {
		return false
	}
	l.nc = nc
	return true
}

// Sever closes the recorded socket (safe while another goroutine reads
// it: both net.Conn and blockingConn allow a concurrent Close) and refuses
// any later one.
func (l *Link) Sever() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = true
	if l.nc != nil {
		l.nc.Close()
	}
}

type linkKey struct{}

// WithLink returns ctx carrying l, for LinkedDial: the driver's Connect
// passes its context (or one derived from it) to the dial function.
func WithLink(ctx context.Context, l *Link) context.Context {
	return context.WithValue(ctx, linkKey{}, l)
}

// DialFunc is the driver's dial signature.
type DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// LinkedDial wraps dial so that the connection it opens is recorded in the
// Link of ctx, if any. The net.Conn is returned unwrapped, so the driver
// still sees a *net.TCPConn (and turns keep-alive on) where it would have.
func LinkedDial(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if l, ok := ctx.Value(linkKey{}).(*Link); ok && !l.Attach(nc) {
			nc.Close()
			return nil, ErrCut
		}
		return nc, nil
	}
}
