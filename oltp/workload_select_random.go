package oltp

import "strings"

// sliceBounds is the k slice of worker tid out of threads for the
// select_random_* scripts: Lua's rlen = table_size/threads (a float),
// rmin = rlen·tid, rmax = rmin + rlen, truncated to integers when passed to
// sb_rand.
func sliceBounds(tableSize, threads, tid int) (uint32, uint32) {
	rlen := float64(tableSize) / float64(threads)
	rmin := rlen * float64(tid)
	return uint32(rmin), uint32(rmin + rlen)
}

// randomPointsSession is select_random_points: one SELECT with
// random_points values of k drawn inside the worker's slice.
type randomPointsSession struct {
	env
	st         *stmt
	rmin, rmax uint32
}

func newRandomPointsSession(e env) *randomPointsSession {
	n := e.o.RandomPoints
	sql := "SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN (" +
		strings.Repeat("?, ", n-1) + "?)\n        "
	s := &randomPointsSession{env: e, st: newStmt(sql, true, n)}
	s.rmin, s.rmax = sliceBounds(e.o.TableSize, e.o.Threads, e.tid)
	return s
}

func (s *randomPointsSession) init(c *conn) error {
	if usePS(s.o) {
		return c.prepare(s.st)
	}
	return nil
}

func (s *randomPointsSession) done(*conn) error { return nil }

func (s *randomPointsSession) event(c *conn) error {
	for i := range s.st.Args {
		s.st.Args[i] = int64(s.dist.Draw(s.r, s.rmin, s.rmax))
	}
	return c.run(s.st)
}

// randomRangesSession is select_random_ranges: one SELECT count(k) over
// number_of_ranges ranges [v, v+delta] of k inside the worker's slice.
type randomRangesSession struct {
	env
	st         *stmt
	rmin, rmax uint32
}

func newRandomRangesSession(e env) *randomRangesSession {
	n := e.o.NumberOfRanges
	sql := "SELECT count(k)\n          FROM sbtest1\n          WHERE " +
		strings.Repeat("k BETWEEN ? AND ? OR ", n-1) + "k BETWEEN ? AND ?"
	s := &randomRangesSession{env: e, st: newStmt(sql, true, 2*n)}
	s.rmin, s.rmax = sliceBounds(e.o.TableSize, e.o.Threads, e.tid)
	return s
}

func (s *randomRangesSession) init(c *conn) error {
	if usePS(s.o) {
		return c.prepare(s.st)
	}
	return nil
}

func (s *randomRangesSession) done(*conn) error { return nil }

func (s *randomRangesSession) event(c *conn) error {
	for i := 0; i < len(s.st.Args); i += 2 {
		v := int64(s.dist.Draw(s.r, s.rmin, s.rmax))
		s.st.Args[i], s.st.Args[i+1] = v, v+int64(s.o.Delta)
	}
	return c.run(s.st)
}
