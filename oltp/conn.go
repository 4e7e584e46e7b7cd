package oltp

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// rawConn is what the engine needs from a go-sql-driver connection. It
// talks to the driver directly, not through database/sql: no pool, no
// per-call locking or argument conversion, and one connection per worker
// as sysbench has. The non-context methods are deliberate: they skip the
// driver's per-statement cancellation watcher (two channel operations per
// statement); a stuck statement is ended by closing the connection.
type rawConn interface {
	driver.Conn
	//lint:ignore SA1019 the non-context methods are the point (see above)
	driver.Execer
	//lint:ignore SA1019 the non-context methods are the point (see above)
	driver.Queryer
}

// conn is one worker's connection with the statement counters of sysbench's
// driver: a statement with a result set is a read; otherwise it is a write
// when it changed rows and "other" when it did not (§1.6).
type conn struct {
	connector driver.Connector
	rc        rawConn
	cnt       counts
	dest      []driver.Value
	buf       []byte
	yielded   time.Time // see yield
	dry       bool      // --mysql-dry-run (dryrun.go): nothing is sent
}

type counts struct{ reads, writes, others int64 }

// stmt is one statement of a workload: its text with ? placeholders, its
// arguments, and its server-side prepared handle (nil in text mode).
type stmt struct {
	sql   string
	read  bool
	ps    driver.Stmt
	args  []driver.Value
	ncols int
}

func newStmt(sql string, read bool, nargs int) *stmt {
	return &stmt{sql: sql, read: read, args: make([]driver.Value, nargs)}
}

// connector returns a driver connector for cfg (which it copies), whose
// connections use blocking sockets when blocking is set (blocking.go) and
// record their socket in the netLink of the context they are dialled with
// (shutdown.go).
func newConnector(cfg *mysql.Config, blocking bool) (driver.Connector, error) {
	if cfg.Net == dryRunNet {
		return dryConnector{}, nil
	}
	c := cfg.Clone()
	// The engine never uses client-side interpolation: prepared statements
	// go to the server, text mode builds its own literals.
	c.InterpolateParams = false
	dial := cfg.DialFunc
	switch {
	case blocking:
		dial = DialBlocking
	case dial == nil && plainNet(cfg.Net):
		dial = dialPlain
	}
	// nil: a network registered with mysql.RegisterDialContext, which the
	// driver dials itself and the engine cannot reach.
	if dial != nil {
		c.DialFunc = linkedDial(dial)
	}
	return mysql.NewConnector(c)
}

// plainNet tells whether the driver dials network with a plain net.Dialer.
func plainNet(network string) bool {
	switch network {
	case "tcp", "tcp4", "tcp6", "unix":
		return true
	}
	return false
}

// dial opens a connection.
func dial(ctx context.Context, cn driver.Connector) (*conn, error) {
	dc, err := cn.Connect(ctx)
	if err != nil {
		return nil, err
	}
	rc, ok := dc.(rawConn)
	if !ok {
		dc.Close()
		return nil, fmt.Errorf("driver connection %T lacks Exec/Query", dc)
	}
	_, dry := dc.(dryConn)
	return &conn{connector: cn, rc: rc, dest: make([]driver.Value, 8), dry: dry}, nil
}

func (c *conn) close() {
	if c != nil && c.rc != nil {
		c.rc.Close()
		c.rc = nil
	}
}

// prepare prepares s on the server.
func (c *conn) prepare(s *stmt) error {
	if c.dry {
		return nil
	}
	ps, err := c.rc.Prepare(s.sql)
	if err != nil {
		return &StatementError{Err: err, SQL: s.sql}
	}
	s.ps = ps
	s.ncols = 0
	return nil
}

// run executes s with its current arguments, reading every row.
func (c *conn) run(s *stmt) error {
	c.yield()
	if c.dry {
		c.cnt.others++
		return nil
	}
	if s.ps == nil {
		c.buf = renderSQL(c.buf[:0], s.sql, s.args)
		if err := c.text(string(c.buf), s.read); err != nil {
			return &StatementError{Err: err, SQL: string(c.buf)}
		}
		return nil
	}
	var err error
	if s.read {
		var rows driver.Rows
		//lint:ignore SA1019 no per-statement cancellation watcher (see rawConn)
		rows, err = s.ps.Query(s.args)
		if err == nil {
			if s.ncols == 0 {
				s.ncols = len(rows.Columns())
			}
			err = c.drain(rows, s.ncols)
		}
		if err == nil {
			c.cnt.reads++
		}
	} else {
		var res driver.Result
		//lint:ignore SA1019 no per-statement cancellation watcher (see rawConn)
		res, err = s.ps.Exec(s.args)
		if err == nil {
			c.countResult(res)
		}
	}
	if err != nil {
		return &StatementError{Err: err, SQL: s.sql, Args: s.args, Prepared: true}
	}
	return nil
}

// query sends a text statement and counts it.
func (c *conn) query(sql string, read bool) error {
	if err := c.text(sql, read); err != nil {
		return &StatementError{Err: err, SQL: sql}
	}
	return nil
}

func (c *conn) text(sql string, read bool) error {
	c.yield()
	if c.dry {
		c.cnt.others++
		return nil
	}
	if read {
		rows, err := c.rc.Query(sql, nil)
		if err != nil {
			return err
		}
		if err := c.drain(rows, len(rows.Columns())); err != nil {
			return err
		}
		c.cnt.reads++
		return nil
	}
	res, err := c.rc.Exec(sql, nil)
	if err != nil {
		return err
	}
	c.countResult(res)
	return nil
}

func (c *conn) countResult(res driver.Result) {
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		c.cnt.writes++
	} else {
		c.cnt.others++
	}
}

// drain reads every row, as sysbench stores every result set.
func (c *conn) drain(rows driver.Rows, ncols int) error {
	if cap(c.dest) < ncols {
		c.dest = make([]driver.Value, ncols)
	}
	dest := c.dest[:ncols]
	for {
		if err := rows.Next(dest); err != nil {
			rows.Close()
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// renderSQL substitutes args for the ? placeholders of sql as literals
// (--db-ps-mode=disable). Placeholders never occur inside quotes in the
// engine's statements.
func renderSQL(dst []byte, sql string, args []driver.Value) []byte {
	n := 0
	for i := 0; i < len(sql); i++ {
		if sql[i] != '?' || n >= len(args) {
			dst = append(dst, sql[i])
			continue
		}
		dst = appendLiteral(dst, args[n])
		n++
	}
	return dst
}

func appendLiteral(dst []byte, v driver.Value) []byte {
	switch x := v.(type) {
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case []byte:
		return appendQuoted(dst, x)
	case string:
		return appendQuoted(dst, []byte(x))
	case nil:
		return append(dst, "NULL"...)
	default:
		return appendQuoted(dst, []byte(fmt.Sprint(x)))
	}
}

func appendQuoted(dst, s []byte) []byte {
	dst = append(dst, '\'')
	for _, b := range s {
		switch b {
		case '\'', '\\':
			dst = append(dst, '\\', b)
		case 0:
			dst = append(dst, '\\', '0')
		default:
			dst = append(dst, b)
		}
	}
	return append(dst, '\'')
}

// StatementError is a failed statement: the server's (or the network's)
// error and the statement's text.
type StatementError struct {
	Err  error
	SQL  string
	Args []driver.Value
	// Prepared: a prepared statement's execution (SQL has its
	// placeholders); else a text statement (SQL is what was sent).
	Prepared bool
}

func (e *StatementError) Error() string {
	if len(e.Args) == 0 {
		return fmt.Sprintf("%v; statement: %s", e.Err, e.SQL)
	}
	return fmt.Sprintf("%v; statement: %s", e.Err, renderSQL(nil, e.SQL, e.Args))
}

func (e *StatementError) Unwrap() error { return e.Err }

// Errno is the MySQL error number of err, or 0.
func Errno(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// Client error numbers that mean the connection is gone (sysbench's list in
// oltp_common.lua's before_restart_event).
var lostConnErrnos = []uint16{2006, 2011, 2013, 2055}

// isConnLost tells whether err means the connection is unusable.
func isConnLost(err error) bool {
	if n := Errno(err); n != 0 {
		for _, l := range lostConnErrnos {
			if n == l {
				return true
			}
		}
		// ER_CONNECTION_KILLED (MariaDB) / ER_QUERY_INTERRUPTED after KILL.
		return n == 1927
	}
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.As(err, &ne)
}
