package oltp

import (
	"fmt"
	"strconv"
)

// session is one worker's instance of a workload: the statements it
// prepared on its connection and its event function (sysbench's
// thread_init / event / thread_done).
type session interface {
	// init prepares the session's statements on a fresh connection; it is
	// called again after a reconnect.
	init(c *conn) error
	// event runs one event (transaction) on c.
	event(c *conn) error
	// done runs when the worker stops (bulk_insert flushes its buffer).
	done(c *conn) error
}

// env is what a session draws from: options, the worker's random
// generator, the run's distribution and unique sequence, and the worker's
// index (sysbench.tid).
type env struct {
	o    *Options
	r    *Rand
	dist *Dist
	uniq *Unique
	tid  int
}

// id draws sysbench.rand.default(1, table_size).
func (e *env) id() int64 { return int64(e.dist.Draw(e.r, 1, uint32(e.o.TableSize))) }

// table draws sysbench.rand.uniform(1, tables).
func (e *env) table() int { return int(e.r.Uniform(1, uint32(e.o.Tables))) }

// newSession builds the session of o.Workload for worker e.tid.
func newSession(e env) (session, error) {
	w, ok := Spec(e.o.Workload)
	if !ok || w.session == nil {
		return nil, fmt.Errorf("unknown workload %q", e.o.Workload)
	}
	return w.session(e), nil
}

// tableName is "sbtestN".
func tableName(n int) string { return "sbtest" + strconv.Itoa(n) }

// usePS tells whether statements go to the server as prepared statements
// (--db-ps-mode=auto) or as text with literals (disable).
func usePS(o *Options) bool { return o.PSMode != "disable" }
