// Package sqlconn is the client connection of the engines that speak to
// the server as sysbench 1.0.20's MySQL driver does (oltp, tpcc): one
// go-sql-driver connection per worker, used through the driver's own
// connection (no database/sql pool, no per-call locking, no
// cancellation watcher), blocking sockets when the run's workers fit
// (blocking.go), the socket of each connection within reach of the
// coordinator's forced shutdown (link.go), --mysql-dry-run (dryrun.go),
// and sysbench's statement counters: a statement with a result set is a
// read; otherwise it is a write when it changed rows and "other" when it
// did not (§1.6).
package sqlconn

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"github.com/go-sql-driver/mysql"
)

// rawConn is what the engines need from a go-sql-driver connection. The
// non-context methods are deliberate: they skip the driver's
// per-statement cancellation watcher (two channel operations per
// statement); a stuck statement is ended by closing its socket
// (link.go).
type rawConn interface {
	driver.Conn
	//lint:ignore SA1019 the non-context methods are the point (see above)
	driver.Execer
	//lint:ignore SA1019 the non-context methods are the point (see above)
	driver.Queryer
}

// Conn is one worker's connection and its statement counters.
type Conn struct {
	rc rawConn
	// Cnt counts the statements sent since the caller last reset it.
	Cnt     Counts
	dest    []driver.Value
	buf     []byte
	yielded time.Time // see yield
	dry     bool      // --mysql-dry-run (dryrun.go): nothing is sent
}

// Counts are sysbench's statement counters.
type Counts struct{ Reads, Writes, Others int64 }

// Stmt is one statement of a workload: its text with ? placeholders, its
// arguments, and its server-side prepared handle (nil in text mode).
type Stmt struct {
	SQL   string
	Read  bool
	Args  []driver.Value
	ps    driver.Stmt
	ncols int
}

// NewStmt is a statement with nargs arguments; read: it returns rows.
func NewStmt(sql string, read bool, nargs int) *Stmt {
	return &Stmt{SQL: sql, Read: read, Args: make([]driver.Value, nargs)}
}

// NewConnector returns a driver connector for cfg (which it copies):
// dry-run connections for DryRunNet; otherwise connections that use
// blocking sockets when blocking is set (blocking.go) and record their
// socket in the Link of the context they are dialled with (link.go).
func NewConnector(cfg *mysql.Config, blocking bool) (driver.Connector, error) {
	if cfg.Net == DryRunNet {
		return dryConnector{}, nil
	}
	c := cfg.Clone()
	// The engines never use client-side interpolation: prepared
	// statements go to the server, text mode builds its own literals.
	c.InterpolateParams = false
	dial := cfg.DialFunc
	switch {
	case blocking:
		dial = DialBlocking
	case dial == nil && plainNet(cfg.Net):
		dial = dialPlain
	}
	// nil: a network registered with mysql.RegisterDialContext, which the
	// driver dials itself and the engines cannot reach.
	if dial != nil {
		c.DialFunc = LinkedDial(dial)
	}
	return mysql.NewConnector(c)
}

// OpenDB opens a database/sql pool of up to conns connections (and one
// more) from NewConnector, for what is not measured: prepare, prewarm,
// checks and cleanup.
func OpenDB(cfg *mysql.Config, conns int) (*sql.DB, error) {
	cn, err := NewConnector(cfg, false)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(cn)
	db.SetMaxOpenConns(conns + 1)
	db.SetMaxIdleConns(conns + 1)
	return db, nil
}

// plainNet tells whether the driver dials network with a plain net.Dialer.
func plainNet(network string) bool {
	switch network {
	case "tcp", "tcp4", "tcp6", "unix":
		return true
	}
	return false
}

// dialPlain is the driver's own dial for its built-in networks.
func dialPlain(ctx context.Context, network, addr string) (net.Conn, error) {
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

// Dial opens a connection (ctx may carry a Link: WithLink).
func Dial(ctx context.Context, cn driver.Connector) (*Conn, error) {
	dc, err := cn.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return New(dc)
}

// New is a Conn over the driver connection dc (go-sql-driver's, or a
// test's with the same non-context Exec and Query).
func New(dc driver.Conn) (*Conn, error) {
	rc, ok := dc.(rawConn)
	if !ok {
		dc.Close()
		return nil, fmt.Errorf("driver connection %T lacks Exec/Query", dc)
	}
	_, dry := dc.(dryConn)
	return &Conn{rc: rc, dest: make([]driver.Value, 8), dry: dry}, nil
}

// Open tells whether c is connected (not closed).
func (c *Conn) Open() bool { return c != nil && c.rc != nil }

// Close closes the connection; a second Close does nothing.
func (c *Conn) Close() {
	if c != nil && c.rc != nil {
		c.rc.Close()
		c.rc = nil
	}
}

// Prepare prepares s on the server.
func (c *Conn) Prepare(s *Stmt) error {
	if c.dry {
		return nil
	}
	ps, err := c.rc.Prepare(s.SQL)
	if err != nil {
		return &StatementError{Err: err, SQL: s.SQL}
	}
	s.ps = ps
	s.ncols = 0
	return nil
}

// Run executes s with its current arguments, reading every row.
func (c *Conn) Run(s *Stmt) error {
	c.yield()
	if c.dry {
		c.Cnt.Others++
		return nil
	}
	if s.ps == nil {
		c.buf = RenderSQL(c.buf[:0], s.SQL, s.Args)
		if err := c.text(string(c.buf), s.Read, nil); err != nil {
			return &StatementError{Err: err, SQL: string(c.buf)}
		}
		return nil
	}
	var err error
	if s.Read {
		var rows driver.Rows
		//lint:ignore SA1019 no per-statement cancellation watcher (see rawConn)
		rows, err = s.ps.Query(s.Args)
		if err == nil {
			if s.ncols == 0 {
				s.ncols = len(rows.Columns())
			}
			err = c.drain(rows, s.ncols, nil)
		}
		if err == nil {
			c.Cnt.Reads++
		}
	} else {
		var res driver.Result
		//lint:ignore SA1019 no per-statement cancellation watcher (see rawConn)
		res, err = s.ps.Exec(s.Args)
		if err == nil {
			c.countResult(res)
		}
	}
	if err != nil {
		return &StatementError{Err: err, SQL: s.SQL, Args: s.Args, Prepared: true}
	}
	return nil
}

// Query sends a text statement and counts it; read: it returns rows,
// which are read and dropped.
func (c *Conn) Query(sql string, read bool) error {
	if err := c.text(sql, read, nil); err != nil {
		return &StatementError{Err: err, SQL: sql}
	}
	return nil
}

// QueryRows sends the text statement q, which returns rows, and reads
// them into rows (whose memory it reuses). q is not kept: the caller may
// reuse it once QueryRows returns.
func (c *Conn) QueryRows(q []byte, rows *Rows) error {
	rows.reset(0)
	if err := c.text(bytesString(q), true, rows); err != nil {
		return &StatementError{Err: err, SQL: string(q)}
	}
	return nil
}

// Exec sends the text statement q, which returns no rows, and counts it
// (a write when it changed rows, else other). q is not kept.
func (c *Conn) Exec(q []byte) error {
	if err := c.text(bytesString(q), false, nil); err != nil {
		return &StatementError{Err: err, SQL: string(q)}
	}
	return nil
}

// bytesString is b as a string without a copy, for the driver's
// Query/Exec, which write the text into their packet buffer and keep
// nothing of it.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (c *Conn) text(sql string, read bool, keep *Rows) error {
	c.yield()
	if c.dry {
		c.Cnt.Others++
		return nil
	}
	if read {
		rows, err := c.rc.Query(sql, nil)
		if err != nil {
			return err
		}
		if err := c.drain(rows, len(rows.Columns()), keep); err != nil {
			return err
		}
		c.Cnt.Reads++
		return nil
	}
	res, err := c.rc.Exec(sql, nil)
	if err != nil {
		return err
	}
	c.countResult(res)
	return nil
}

func (c *Conn) countResult(res driver.Result) {
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		c.Cnt.Writes++
	} else {
		c.Cnt.Others++
	}
}

// drain reads every row, as sysbench stores every result set, into keep
// when it is not nil.
func (c *Conn) drain(rows driver.Rows, ncols int, keep *Rows) error {
	if cap(c.dest) < ncols {
		c.dest = make([]driver.Value, ncols)
	}
	dest := c.dest[:ncols]
	if keep != nil {
		keep.reset(ncols)
	}
	for {
		if err := rows.Next(dest); err != nil {
			rows.Close()
			if err == io.EOF {
				return nil
			}
			return err
		}
		if keep != nil {
			keep.add(dest)
		}
	}
}

// RenderSQL substitutes args for the ? placeholders of sql as literals
// (--db-ps-mode=disable). Placeholders never occur inside quotes in the
// engines' statements.
func RenderSQL(dst []byte, sql string, args []driver.Value) []byte {
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
		return AppendQuoted(dst, x)
	case string:
		return AppendQuoted(dst, []byte(x))
	case nil:
		return append(dst, "NULL"...)
	default:
		return AppendQuoted(dst, []byte(fmt.Sprint(x)))
	}
}

// AppendQuoted appends s as a quoted SQL string literal, escaping quotes,
// backslashes and NULs as sysbench's driver does.
func AppendQuoted[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '\'')
	for i := 0; i < len(s); i++ {
		switch b := s[i]; b {
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
	return fmt.Sprintf("%v; statement: %s", e.Err, RenderSQL(nil, e.SQL, e.Args))
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

// LostConnErrnos are the client error numbers that mean the connection is
// gone (sysbench's list in oltp_common.lua's before_restart_event).
var LostConnErrnos = []uint16{2006, 2011, 2013, 2055}

// IsConnLost tells whether err means the connection is unusable.
func IsConnLost(err error) bool {
	if n := Errno(err); n != 0 {
		for _, l := range LostConnErrnos {
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
