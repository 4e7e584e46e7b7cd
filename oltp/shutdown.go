package oltp

import (
	"sync/atomic"

	"benchmatrix/sqlconn"

	"github.com/go-sql-driver/mysql"
)

// The forced shutdown (Options.ForcedShutdown, sysbench's
// --forced-shutdown). A run stops issuing events at the end of its window
// and then waits for the ones in flight; a statement stuck behind a lock,
// or on a server that froze (SIGSTOP, a hung disk), would keep it waiting
// forever. With a grace set, the coordinator waits at most that long and
// then cuts: it closes the socket under every connection that still has a
// statement in flight, so that the blocked read(2) or netpoller wait
// returns with an error, and the worker, which knows it was cut, ends
// without counting the event or the error.
//
// Closing the socket, not the driver connection: go-sql-driver's Close
// writes COM_QUIT and tears down state that the worker's goroutine is
// using, which is not safe while that goroutine waits in a read. The
// socket is reached through netLink: every connection of a run is dialled
// by linkedDial, which records the net.Conn in the link of the worker
// whose context it was dialled with.

// Worker states, for the cut. A worker is busy from the moment it starts
// an event (or its session's final flush) until it has finished it; the
// coordinator's cut swaps every state to cut and closes the sockets of the
// workers that were busy. The compare-and-swaps decide, without a lock,
// whether an event that ends just as the grace runs out completed (the
// worker got back to idle first) or was cut.
const (
	workerIdle int32 = iota // nothing in flight: between events, waiting for an arrival, or ended
	workerBusy              // in an event or the final flush, possibly waiting on the server
	workerCut               // cut: its socket was closed, and it must start nothing more
)

// The link between a worker and its socket is sqlconn's.
type netLink = sqlconn.Link

var (
	errCut     = sqlconn.ErrCut
	withLink   = sqlconn.WithLink
	linkedDial = sqlconn.LinkedDial
)

// cutLogger passes the driver's log lines on until the cut and drops them
// after it: each socket the cut closes makes the driver log the broken
// read ("[mysql] ... use of closed network connection"), which says
// nothing that Result.Unfinished does not, and sysbench prints nothing
// of the kind.
type cutLogger struct {
	inner mysql.Logger
	cut   atomic.Bool
}

func (l *cutLogger) Print(v ...any) {
	if !l.cut.Load() {
		l.inner.Print(v...)
	}
}

// quietAfterCut returns cfg with its logger wrapped in l (a copy; cfg is
// not changed). A nil logger is the driver's default, which cannot be
// reached to wrap: it is left alone.
func (l *cutLogger) quietAfterCut(cfg *mysql.Config) *mysql.Config {
	if cfg.Logger == nil {
		return cfg
	}
	c := cfg.Clone()
	l.inner = cfg.Logger
	c.Logger = l
	return c
}

// cutWorkers is the cut: every worker is marked cut, and those with an
// event in flight have their socket closed. It returns how many events
// were in flight. A connection on a network registered with
// mysql.RegisterDialContext (no dial function the engine can wrap) has no
// socket in its link; its worker is still marked, but the run then waits
// for its statement as it would without a grace.
func cutWorkers(workers []*worker) (unfinished int) {
	for _, w := range workers {
		if w.state.Swap(workerCut) == workerBusy {
			unfinished++
			w.link.Sever()
		}
	}
	return unfinished
}

// begin marks the worker busy before it starts an event; false means it
// was cut and must end.
func (w *worker) begin() bool { return w.state.CompareAndSwap(workerIdle, workerBusy) }

// finish marks the worker idle after an event; false means the event was
// cut.
func (w *worker) finish() bool { return w.state.CompareAndSwap(workerBusy, workerIdle) }

// wasCut reports whether the worker has been cut.
func (w *worker) wasCut() bool { return w.state.Load() == workerCut }
