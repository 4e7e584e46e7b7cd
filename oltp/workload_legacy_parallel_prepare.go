package oltp

import (
	"fmt"
	"io"
	"strconv"
)

// sysbench 1.0.20's legacy parallel_prepare.lua (tests/include/
// oltp_legacy/): its run loads the tables. Each event prints
// "thread prepare<thread_id>" and runs common.lua's create_insert for
// tables thread_id+1, thread_id+1+num_threads, ... up to
// oltp_tables_count (num_threads is the --num-threads option,
// legacyThreads): CREATE TABLE, multi-row INSERTs of its rows through
// sysbench's bulk-insert buffer, then the k index. A second event of a
// worker meets its tables already there and fails, as sysbench's does
// ("for proper initialization use --max-requests = N, where N is
// --num-threads"). Its prepare and cleanup are common.lua's: those of
// the other legacy scripts. The lines it prints go where Options.print
// says (the command line's standard output, as Lua's print).
//
// It is not a manifest workload (Spec.cliOnly): a cell prepares its tables
// before the run, whose CREATE TABLE would then fail.

type legacyParallelPrepareSession struct {
	env
	out     io.Writer
	cv, pv  []byte
	row     []byte
	threads int
}

func newLegacyParallelPrepareSession(e env) *legacyParallelPrepareSession {
	out := e.o.print
	if out == nil {
		out = io.Discard
	}
	return &legacyParallelPrepareSession{env: e, out: out, threads: legacyThreads(e.o),
		cv: make([]byte, cLen), pv: make([]byte, padLen)}
}

func (s *legacyParallelPrepareSession) init(*conn) error { return nil }
func (s *legacyParallelPrepareSession) done(*conn) error { return nil }

func (s *legacyParallelPrepareSession) event(c *conn) error {
	fmt.Fprintf(s.out, "thread prepare%d\n", s.tid)
	for i := s.tid + 1; i <= s.o.Tables; i += s.threads {
		if err := s.createInsert(c, i); err != nil {
			return err
		}
	}
	return nil
}

// createInsert is common.lua's create_insert(n) for the MySQL driver.
func (s *legacyParallelPrepareSession) createInsert(c *conn, n int) error {
	o := s.o
	fmt.Fprintf(s.out, "Creating table 'sbtest%d'...\n", n)
	if err := c.query(legacyCreateTableSQL(o, n), false); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "Inserting %d records into 'sbtest%d'\n", o.TableSize, n)
	prefix := "INSERT INTO sbtest" + strconv.Itoa(n) + "(id, k, c, pad) VALUES"
	if o.AutoInc {
		prefix = "INSERT INTO sbtest" + strconv.Itoa(n) + "(k, c, pad) VALUES"
	}
	bb := newBulkBuffer(prefix)
	size := uint32(o.TableSize)
	for j := 1; j <= o.TableSize; j++ {
		// c, pad, then k, in the script's order.
		s.r.Digits(s.cv, 11)
		s.r.Digits(s.pv, 11)
		k := s.dist.Draw(s.r, 1, size)
		r := append(s.row[:0], '(')
		if o.AutoInc {
			r = strconv.AppendUint(r, uint64(k), 10)
			r = append(r, ", '"...)
			r = append(r, s.cv...)
			r = append(r, "', '"...)
			r = append(r, s.pv...)
			r = append(r, "')"...)
		} else {
			r = strconv.AppendInt(r, int64(j), 10)
			r = append(r, ',')
			r = strconv.AppendUint(r, uint64(k), 10)
			r = append(r, ",'"...)
			r = append(r, s.cv...)
			r = append(r, "', '"...)
			r = append(r, s.pv...)
			r = append(r, "'  )"...)
		}
		s.row = r
		if !bb.fits(len(r)) {
			if err := c.query(bb.take(), false); err != nil {
				return err
			}
		}
		bb.add(r)
	}
	if bb.rows > 0 {
		if err := c.query(bb.take(), false); err != nil {
			return err
		}
	}
	if o.CreateSecondary {
		fmt.Fprintf(s.out, "Creating secondary indexes on 'sbtest%d'...\n", n)
		return c.query(fmt.Sprintf("CREATE INDEX k_%d on sbtest%d(k)", n, n), false)
	}
	return nil
}
