// Package procs is the commands' GOMAXPROCS policy for the oltp engine's
// blocking sockets: the engine, a library, never changes GOMAXPROCS; a
// command, which owns its process, hands it a reserver from here.
package procs

import (
	"os"
	"runtime"
	"sync"

	"benchmatrix/sqlconn"
)

// procReservations is the command's GOMAXPROCS policy for the oltp
// engine. A run that uses blocking sockets needs one P per worker, each of
// which waits inside read(2) (sqlconn/blocking.go says why); the engine, a
// library, never changes GOMAXPROCS, so the command, which owns the
// process, does it here. GOMAXPROCS is raised to one more than the workers
// of every run holding a reservation, and restored when the last one ends:
// to the runtime's own (cgroup-aware, self-updating) default, or, when
// $GOMAXPROCS pinned it, to the value it had.
type procReservations struct {
	mu     sync.Mutex
	active int // workers of the runs holding a reservation
	orig   int // GOMAXPROCS before the first of them
}

var _ sqlconn.ProcReserver = (*procReservations)(nil)

// New returns the reserver a command hands to the oltp engine. One is
// enough for the whole process: its runs share the count.
func New() sqlconn.ProcReserver { return &procReservations{} }

// Reserve raises GOMAXPROCS so that n more workers can each block in a
// system call on their own P, and returns the function that gives them
// back (calling it again does nothing).
func (p *procReservations) Reserve(n int) (release func()) {
	p.mu.Lock()
	if p.active == 0 {
		p.orig = runtime.GOMAXPROCS(0)
	}
	p.active += n
	if want := p.active + 1; want > runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(want)
	}
	p.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { p.release(n) }) }
}

func (p *procReservations) release(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active -= n
	if p.active > 0 || runtime.GOMAXPROCS(0) == p.orig {
		return
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.SetDefaultGOMAXPROCS()
	} else {
		runtime.GOMAXPROCS(p.orig)
	}
}
