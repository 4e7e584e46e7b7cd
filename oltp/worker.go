package oltp

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"benchmatrix/sqlconn"
)

// shared is the state every worker of a run reads: options, stop and phase
// flags, the event budget and, under --rate, the arrival queue.
type shared struct {
	o         *Options
	connector driver.Connector
	stop      atomic.Bool
	stopCh    chan struct{}
	phase     atomic.Int32
	limit     int64 // o.Events, 0 = none
	issued    atomic.Int64
	running   atomic.Int32
	arrivals  <-chan arrival // nil = closed loop
	lateAfter time.Duration
	dropped   atomic.Int64 // open loop: arrivals refused by the full backlog
	// left holds the arrivals a worker took as the run stopped, unstarted:
	// part of the backlog at the end.
	leftMu sync.Mutex
	left   []arrival

	fatalOnce sync.Once
	fatal     error
	fatalCh   chan struct{}
}

// leftOver keeps an arrival taken but not started because the run
// stopped.
func (sh *shared) leftOver(a arrival) {
	sh.leftMu.Lock()
	sh.left = append(sh.left, a)
	sh.leftMu.Unlock()
}

func (sh *shared) requestStop() {
	if sh.stop.CompareAndSwap(false, true) {
		close(sh.stopCh)
	}
}

func (sh *shared) setFatal(err error) {
	sh.fatalOnce.Do(func() {
		sh.fatal = err
		close(sh.fatalCh)
	})
	sh.requestStop()
}

// ignorable tells whether err restarts the event (sysbench's
// --mysql-ignore-errors) rather than ending the run.
func (sh *shared) ignorable(err error) bool {
	if sh.o.IgnoreAllErrors {
		return true
	}
	n := Errno(err)
	if n == 0 && isConnLost(err) {
		// A network-level loss has no server error number: it is ignorable
		// when any of the client's lost-connection codes is.
		for _, l := range lostConnErrnos {
			if sh.ignores(l) {
				return true
			}
		}
		return false
	}
	return n != 0 && sh.ignores(n)
}

func (sh *shared) ignores(n uint16) bool {
	for _, e := range sh.o.IgnoreErrors {
		if e == n {
			return true
		}
	}
	return false
}

// worker runs events on its own connection until told to stop.
type worker struct {
	id    int
	sh    *shared
	sess  session
	c     *conn
	stats *workerStats
	state atomic.Int32 // workerIdle, workerBusy or workerCut (shutdown.go)
	link  *netLink     // the socket under c, for the cut
}

// start connects and prepares the session's statements (sysbench's
// thread_init).
func (w *worker) start(ctx context.Context) error {
	c, err := dial(withLink(ctx, w.link), w.sh.connector)
	if err != nil {
		return fmt.Errorf("worker %d: connect: %w", w.id, err)
	}
	w.c = c
	if err := w.sess.init(c); err != nil {
		return fmt.Errorf("worker %d: prepare statements: %w", w.id, err)
	}
	return nil
}

// loop is the worker's event loop: closed (back to back) or, with
// arrivals, open (one event per arrival, latency from its intended time).
func (w *worker) loop() {
	sh := w.sh
	defer sh.running.Add(-1)
	var rec eventRecord
	for !sh.stop.Load() {
		rec = eventRecord{phase: int(sh.phase.Load()), dispatchNs: -1}
		var start time.Time
		if sh.arrivals != nil {
			var a arrival
			waited := false
			select {
			case a = <-sh.arrivals: // queued: the wait was the queue's
			default:
				waited = true // idle: what follows is the client's own delay
				select {
				case a = <-sh.arrivals:
				case <-sh.stopCh:
					return
				}
			}
			if sh.stop.Load() {
				sh.leftOver(a)
				return
			}
			rec.phase = a.phase
			start = a.at
			if waited {
				rec.dispatchNs = max(int64(time.Since(start)), 0)
			}
		}
		if rec.phase == phRun && sh.limit > 0 && sh.issued.Add(1) > sh.limit {
			sh.requestStop()
			break
		}
		now := time.Now()
		if start.IsZero() {
			start = now
		} else if now.Sub(start) > sh.lateAfter {
			rec.late = true
		}
		if !w.begin() {
			return
		}
		err := w.event(&rec)
		completed := w.finish()
		rec.ns = int64(time.Since(start))
		rec.q = w.c.Cnt
		w.c.Cnt = counts{}
		if !completed {
			// Cut by the forced shutdown: the event is dropped, counted
			// neither as an event (nor its latency) nor as an error, as
			// its failure is the cut's doing; the statements it completed
			// before the cut stay counted, as sysbench counts each query
			// when it completes.
			rec.done = false
			w.stats.record(&rec)
			return
		}
		w.stats.record(&rec)
		if err != nil {
			sh.setFatal(err)
			break
		}
	}
	if w.c != nil && w.c.Open() {
		if !w.begin() {
			return
		}
		err := w.sess.done(w.c)
		if !w.finish() {
			return // cut during the final flush: its rows are lost, uncounted
		}
		if err != nil {
			sh.setFatal(fmt.Errorf("worker %d: %w", w.id, err))
		}
		c := w.c.Cnt
		w.c.Cnt = counts{}
		w.stats.record(&eventRecord{phase: phRun, q: c})
	}
}

// event runs one event, restarting it from the top after an ignorable
// error (no ROLLBACK, as sysbench) and reconnecting after a lost
// connection. It sets rec.done when the event completed.
func (w *worker) event(rec *eventRecord) error {
	sh := w.sh
	for {
		err := w.sess.event(w.c)
		if err == nil {
			rec.done = true
			return nil
		}
		if w.wasCut() {
			return nil // the cut closed the socket: not an error (see loop)
		}
		if !sh.ignorable(err) {
			return fmt.Errorf("%s: worker %d: %w", sh.o.Workload, w.id, err)
		}
		rec.errors++
		if isConnLost(err) {
			if !w.reconnect(rec) {
				return nil
			}
		}
		if sh.stop.Load() {
			return nil // abandoned: not counted as an event
		}
	}
}

// reconnect replaces a lost connection, retrying every few milliseconds
// until it succeeds or the run stops, and prepares the statements again.
func (w *worker) reconnect(rec *eventRecord) bool {
	sh := w.sh
	q := w.c.Cnt
	w.c.close()
	delay := time.Millisecond
	for !sh.stop.Load() {
		c, err := dial(withLink(context.Background(), w.link), sh.connector)
		if err == nil {
			c.Cnt = q
			if err = w.sess.init(c); err == nil {
				w.c = c
				rec.reconnects++
				return true
			}
			c.close()
		}
		select {
		case <-sh.stopCh:
		case <-time.After(delay):
		}
		if delay < 100*time.Millisecond {
			delay *= 2
		}
	}
	w.c = &conn{&sqlconn.Conn{Cnt: q}}
	return false
}
