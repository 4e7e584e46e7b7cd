package oltp

// The single-statement 0.5-era scripts that sysbench 1.0.20 bundles in
// tests/include/oltp_legacy/ (reference/sysbench.md §2): each event is one
// text statement with literals on a table drawn uniformly, no transaction.
// They run on the tables Prepare creates for them, the scripts' own
// layout (legacy.go).

// legacyStatementSession runs one statement per event, built by stmt.
type legacyStatementSession struct {
	legacySession
	stmt func(s *legacyStatementSession, c *conn, table string) error
}

func newLegacyStatementSession(e env, stmt func(s *legacyStatementSession, c *conn, table string) error) *legacyStatementSession {
	return &legacyStatementSession{legacySession: *newLegacySession(e), stmt: stmt}
}

func (s *legacyStatementSession) event(c *conn) error {
	return s.stmt(s, c, tableName(s.table()))
}

// select.lua: SELECT pad FROM sbtestN WHERE id=…
func legacySelect(s *legacyStatementSession, c *conn, t string) error {
	return s.q(c, true, "SELECT pad FROM ", t, " WHERE id=", s.id())
}

// oltp_simple.lua: SELECT c FROM sbtestN WHERE id=…
func legacySimple(s *legacyStatementSession, c *conn, t string) error {
	return s.q(c, true, "SELECT c FROM ", t, " WHERE id=", s.id())
}

// delete.lua: DELETE FROM sbtestN WHERE id=…
func legacyDelete(s *legacyStatementSession, c *conn, t string) error {
	return s.q(c, false, "DELETE FROM ", t, " WHERE id=", s.id())
}

// update_index.lua: UPDATE sbtestN SET k=k+1 WHERE id=…
func legacyUpdateIndex(s *legacyStatementSession, c *conn, t string) error {
	return s.q(c, false, "UPDATE ", t, " SET k=k+1 WHERE id=", s.id())
}

// update_non_index.lua: UPDATE sbtestN SET c='…' WHERE id=… (c drawn
// before the id, as the script does).
func legacyUpdateNonIndex(s *legacyStatementSession, c *conn, t string) error {
	s.r.Digits(s.c, 11)
	return s.q(c, false, "UPDATE ", t, " SET c=", s.c, " WHERE id=", s.id())
}

// insert.lua: INSERT INTO sbtestN (id, k, c, pad) VALUES (id, k, '…',
// '…'); id is 0 (AUTO_INCREMENT assigns it) with oltp_auto_inc, else the
// run's unique sequence (sb_rand_uniq). k, c and pad are drawn first.
func legacyInsert(s *legacyStatementSession, c *conn, t string) error {
	k := s.id()
	s.r.Digits(s.c, 11)
	s.r.Digits(s.pad, 11)
	var id int64
	if !s.o.AutoInc {
		id = int64(s.uniq.Next())
	}
	return s.q(c, false, "INSERT INTO ", t, " (id, k, c, pad) VALUES (", id, ", ", k, ", ", s.c, ", ", s.pad, ")")
}
