package oltp

import "fmt"

// The statement groups of oltp_common.lua (§1.6).
type stmtKind int

const (
	kPoint stmtKind = iota
	kSimpleRange
	kSumRange
	kOrderRange
	kDistinctRange
	kIndexUpdate
	kNonIndexUpdate
	kDelete
	kInsert
	numKinds
)

var kindSQL = [numKinds]struct {
	sql   string
	read  bool
	nargs int
}{
	kPoint:          {"SELECT c FROM sbtest%d WHERE id=?", true, 1},
	kSimpleRange:    {"SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ?", true, 2},
	kSumRange:       {"SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN ? AND ?", true, 2},
	kOrderRange:     {"SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c", true, 2},
	kDistinctRange:  {"SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c", true, 2},
	kIndexUpdate:    {"UPDATE sbtest%d SET k=k+1 WHERE id=?", false, 1},
	kNonIndexUpdate: {"UPDATE sbtest%d SET c=? WHERE id=?", false, 2},
	kDelete:         {"DELETE FROM sbtest%d WHERE id=?", false, 1},
	kInsert:         {"INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)", false, 4},
}

// insertAutoSQL is the re-insert of reinsert_id=auto: no id, so
// AUTO_INCREMENT assigns a new one (§2.5; not what sysbench does).
const insertAutoSQL = "INSERT INTO sbtest%d (k, c, pad) VALUES (?, ?, ?)"

// oltpSession runs the oltp_common.lua scripts: read_write, read_only,
// write_only, point_select, update_index, update_non_index and delete.
type oltpSession struct {
	env
	trx           bool
	points        int
	ranges        bool
	writes        bool // index/non-index updates and delete/inserts
	deleteOnly    bool // oltp_delete
	used          [numKinds]bool
	st            [][numKinds]*stmt // [table-1][kind]
	begin, commit *stmt
	c, pad        []byte
}

func newOLTPSession(e env) *oltpSession {
	o := e.o
	s := &oltpSession{env: e, c: make([]byte, cLen), pad: make([]byte, padLen)}
	switch o.Workload {
	case "oltp_read_write":
		s.trx, s.points, s.ranges, s.writes = !o.SkipTrx, o.PointSelects, o.RangeSelects, true
	case "oltp_read_only":
		s.trx, s.points, s.ranges = !o.SkipTrx, o.PointSelects, o.RangeSelects
	case "oltp_write_only":
		s.trx, s.writes = !o.SkipTrx, true
	case "oltp_point_select":
		s.points = 1 // the script forces point_selects=1
		s.used[kPoint] = true
	case "oltp_update_index":
		s.used[kIndexUpdate] = true
	case "oltp_update_non_index":
		s.used[kNonIndexUpdate] = true
	case "oltp_delete":
		s.deleteOnly = true
		s.used[kDelete] = true
	}
	if s.points > 0 || o.Workload == "oltp_read_write" || o.Workload == "oltp_read_only" {
		s.used[kPoint] = true
	}
	if s.ranges {
		s.used[kSimpleRange], s.used[kSumRange], s.used[kOrderRange], s.used[kDistinctRange] = true, true, true, true
	}
	if s.writes {
		s.used[kIndexUpdate], s.used[kNonIndexUpdate], s.used[kDelete], s.used[kInsert] = true, true, true, true
	}
	s.st = make([][numKinds]*stmt, o.Tables)
	for t := range s.st {
		for k := stmtKind(0); k < numKinds; k++ {
			if !s.used[k] {
				continue
			}
			d := kindSQL[k]
			sql, nargs := d.sql, d.nargs
			if k == kInsert && o.ReinsertID == "auto" {
				sql, nargs = insertAutoSQL, 3
			}
			s.st[t][k] = newStmt(fmt.Sprintf(sql, t+1), d.read, nargs)
		}
	}
	if s.trx {
		s.begin = newStmt("BEGIN", false, 0)
		s.commit = newStmt("COMMIT", false, 0)
	}
	return s
}

func (s *oltpSession) init(c *conn) error {
	if !usePS(s.o) {
		return nil
	}
	if s.trx {
		if err := c.prepare(s.begin); err != nil {
			return err
		}
		if err := c.prepare(s.commit); err != nil {
			return err
		}
	}
	// sysbench prepares group by group, each for every table.
	for k := stmtKind(0); k < numKinds; k++ {
		for t := range s.st {
			if st := s.st[t][k]; st != nil {
				if err := c.prepare(st); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (s *oltpSession) done(*conn) error { return nil }

func (s *oltpSession) event(c *conn) error {
	o := s.o
	if s.deleteOnly {
		t := s.table()
		st := s.st[t-1][kDelete]
		st.Args[0] = s.id()
		return c.run(st)
	}
	switch o.Workload {
	case "oltp_update_index":
		return s.indexUpdates(c)
	case "oltp_update_non_index":
		return s.nonIndexUpdates(c)
	}
	if s.trx {
		if err := c.run(s.begin); err != nil {
			return err
		}
	}
	if s.used[kPoint] {
		if err := s.pointSelects(c); err != nil {
			return err
		}
	}
	if s.ranges {
		for _, k := range [...]stmtKind{kSimpleRange, kSumRange, kOrderRange, kDistinctRange} {
			if err := s.rangeGroup(c, k, s.rangeCount(k)); err != nil {
				return err
			}
		}
	}
	if s.writes {
		if err := s.indexUpdates(c); err != nil {
			return err
		}
		if err := s.nonIndexUpdates(c); err != nil {
			return err
		}
		if err := s.deleteInserts(c); err != nil {
			return err
		}
	}
	if s.trx {
		return c.run(s.commit)
	}
	return nil
}

func (s *oltpSession) rangeCount(k stmtKind) int {
	switch k {
	case kSimpleRange:
		return s.o.SimpleRanges
	case kSumRange:
		return s.o.SumRanges
	case kOrderRange:
		return s.o.OrderRanges
	}
	return s.o.DistinctRanges
}

// Each group draws its table once (§1.6: per group, not per transaction).

func (s *oltpSession) pointSelects(c *conn) error {
	st := s.st[s.table()-1][kPoint]
	for i := 0; i < s.points; i++ {
		st.Args[0] = s.id()
		if err := c.run(st); err != nil {
			return err
		}
	}
	return nil
}

func (s *oltpSession) rangeGroup(c *conn, k stmtKind, n int) error {
	st := s.st[s.table()-1][k]
	for i := 0; i < n; i++ {
		x := s.id()
		st.Args[0], st.Args[1] = x, x+int64(s.o.RangeSize)-1
		if err := c.run(st); err != nil {
			return err
		}
	}
	return nil
}

func (s *oltpSession) indexUpdates(c *conn) error {
	st := s.st[s.table()-1][kIndexUpdate]
	for i := 0; i < s.o.IndexUpdates; i++ {
		st.Args[0] = s.id()
		if err := c.run(st); err != nil {
			return err
		}
	}
	return nil
}

func (s *oltpSession) nonIndexUpdates(c *conn) error {
	st := s.st[s.table()-1][kNonIndexUpdate]
	for i := 0; i < s.o.NonIndexUpdates; i++ {
		s.r.Digits(s.c, 11)
		st.Args[0], st.Args[1] = s.c, s.id()
		if err := c.run(st); err != nil {
			return err
		}
	}
	return nil
}

// deleteInserts deletes a row and re-inserts it with the same id (§1.6),
// or with an AUTO_INCREMENT id under reinsert_id=auto.
func (s *oltpSession) deleteInserts(c *conn) error {
	t := s.table() - 1
	del, ins := s.st[t][kDelete], s.st[t][kInsert]
	for i := 0; i < s.o.DeleteInserts; i++ {
		id, k := s.id(), s.id()
		s.r.Digits(s.c, 11)
		s.r.Digits(s.pad, 11)
		del.Args[0] = id
		if len(ins.Args) == 4 {
			ins.Args[0], ins.Args[1], ins.Args[2], ins.Args[3] = id, k, s.c, s.pad
		} else {
			ins.Args[0], ins.Args[1], ins.Args[2] = k, s.c, s.pad
		}
		if err := c.run(del); err != nil {
			return err
		}
		if err := c.run(ins); err != nil {
			return err
		}
	}
	return nil
}
