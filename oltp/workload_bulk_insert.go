package oltp

import "strconv"

// bulkPacketSize is sysbench's BULK_PACKET_SIZE: the multi-row INSERT
// buffer of prepare and of bulk_insert.
const bulkPacketSize = 512 * 1024

// bulkBuffer builds multi-row INSERTs exactly as sysbench's
// db_bulk_insert_next does: a row is added if prefix + rows + ',' + row + a
// terminating NUL fit in bulkPacketSize, otherwise the buffer is flushed
// first.
type bulkBuffer struct {
	prefix string
	buf    []byte
	rows   int
}

func newBulkBuffer(prefix string) *bulkBuffer {
	b := &bulkBuffer{prefix: prefix, buf: make([]byte, 0, bulkPacketSize)}
	b.buf = append(b.buf, prefix...)
	return b
}

// fits tells whether a row of n bytes fits without a flush.
func (b *bulkBuffer) fits(n int) bool {
	sep := 0
	if b.rows > 0 {
		sep = 1
	}
	return len(b.buf)+n+1+sep <= bulkPacketSize
}

// add appends a row; the caller flushes first when !fits.
func (b *bulkBuffer) add(row []byte) {
	if b.rows > 0 {
		b.buf = append(b.buf, ',')
	}
	b.buf = append(b.buf, row...)
	b.rows++
}

// take returns the statement and resets the buffer.
func (b *bulkBuffer) take() string {
	s := string(b.buf)
	b.buf = append(b.buf[:0], b.prefix...)
	b.rows = 0
	return s
}

// bulkInsertSession is bulk_insert: every event appends the row (n, n) to
// the worker's INSERT into its own table sbtest<tid+1>.
type bulkInsertSession struct {
	env
	bb  *bulkBuffer
	n   int64
	row []byte
}

func (s *bulkInsertSession) init(*conn) error { return nil }

func (s *bulkInsertSession) event(c *conn) error {
	if s.bb == nil {
		s.bb = newBulkBuffer("INSERT INTO sbtest" + strconv.Itoa(s.tid+1) + " VALUES")
	}
	s.n++
	r := append(s.row[:0], '(')
	r = strconv.AppendInt(r, s.n, 10)
	r = append(r, ',')
	r = strconv.AppendInt(r, s.n, 10)
	r = append(r, ')')
	s.row = r
	if !s.bb.fits(len(r)) {
		if err := c.query(s.bb.take(), false); err != nil {
			return err
		}
	}
	s.bb.add(r)
	return nil
}

func (s *bulkInsertSession) done(c *conn) error {
	if s.bb == nil || s.bb.rows == 0 {
		return nil
	}
	return c.query(s.bb.take(), false)
}
