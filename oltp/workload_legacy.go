package oltp

import (
	"strconv"
	"strings"
)

// legacySession is sysbench 0.5's oltp.lua (§2.2): one table per
// transaction, text queries with literals, and LOCK TABLES … WRITE /
// UNLOCK TABLES around the transaction instead of BEGIN/COMMIT on MyISAM.
// It runs on the tables Prepare creates for it, the legacy scripts'
// layout (legacy.go).
type legacySession struct {
	env
	begin, commit string
	c, pad        []byte
	buf           []byte
}

func newLegacySession(e env) *legacySession {
	s := &legacySession{env: e, begin: "BEGIN", commit: "COMMIT",
		c: make([]byte, cLen), pad: make([]byte, padLen)}
	if strings.EqualFold(e.o.StorageEngine, "myisam") {
		locks := make([]string, e.o.Tables)
		for i := range locks {
			locks[i] = tableName(i+1) + " WRITE"
		}
		s.begin = "LOCK TABLES " + strings.Join(locks, " ,")
		s.commit = "UNLOCK TABLES"
	}
	return s
}

func (s *legacySession) init(*conn) error { return nil }
func (s *legacySession) done(*conn) error { return nil }

// q builds a statement from parts; ints are appended as literals.
func (s *legacySession) q(c *conn, read bool, parts ...any) error {
	b := s.buf[:0]
	for _, p := range parts {
		switch x := p.(type) {
		case string:
			b = append(b, x...)
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case []byte:
			b = appendQuoted(b, x)
		}
	}
	s.buf = b
	return c.query(string(b), read)
}

func (s *legacySession) event(c *conn) error {
	o := s.o
	t := tableName(s.table())
	if !o.SkipTrx {
		if err := c.query(s.begin, false); err != nil {
			return err
		}
	}
	for i := 0; i < o.PointSelects; i++ {
		if err := s.q(c, true, "SELECT c FROM ", t, " WHERE id=", s.id()); err != nil {
			return err
		}
	}
	if o.RangeSelects {
		ranges := []struct {
			n          int
			head, tail string
		}{
			{o.SimpleRanges, "SELECT c FROM ", ""},
			{o.SumRanges, "SELECT SUM(K) FROM ", ""},
			{o.OrderRanges, "SELECT c FROM ", " ORDER BY c"},
			{o.DistinctRanges, "SELECT DISTINCT c FROM ", " ORDER BY c"},
		}
		for _, r := range ranges {
			for i := 0; i < r.n; i++ {
				x := s.id()
				if err := s.q(c, true, r.head, t, " WHERE id BETWEEN ", x, " AND ",
					x+int64(o.RangeSize)-1, r.tail); err != nil {
					return err
				}
			}
		}
	}
	for i := 0; i < o.IndexUpdates; i++ {
		if err := s.q(c, false, "UPDATE ", t, " SET k=k+1 WHERE id=", s.id()); err != nil {
			return err
		}
	}
	for i := 0; i < o.NonIndexUpdates; i++ {
		s.r.Digits(s.c, 11)
		if err := s.q(c, false, "UPDATE ", t, " SET c=", s.c, " WHERE id=", s.id()); err != nil {
			return err
		}
	}
	for i := 0; i < o.DeleteInserts; i++ {
		id := s.id()
		if err := s.q(c, false, "DELETE FROM ", t, " WHERE id=", id); err != nil {
			return err
		}
		k := s.id()
		s.r.Digits(s.c, 11)
		s.r.Digits(s.pad, 11)
		var err error
		if o.ReinsertID == "auto" {
			err = s.q(c, false, "INSERT INTO ", t, " (k, c, pad) VALUES (", k, ", ", s.c, ", ", s.pad, ")")
		} else {
			err = s.q(c, false, "INSERT INTO ", t, " (id, k, c, pad) VALUES (", id, ", ", k, ", ", s.c, ", ", s.pad, ")")
		}
		if err != nil {
			return err
		}
	}
	if !o.SkipTrx {
		return c.query(s.commit, false)
	}
	return nil
}
