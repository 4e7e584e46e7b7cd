package slap

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/sqlconn"
)

// DriverDialer opens sessions with the MySQL driver, one network
// connection per session (no pool: --detach really reconnects). Every
// statement goes as a plain query (COM_QUERY, text protocol) with multiple
// statements allowed, as mariadb-slap's client does.
type DriverDialer struct {
	Config *mysql.Config
	// InitCommand is run on every new connection (--init-command).
	InitCommand string
	// Retries is how often a client tries to connect (mariadb-slap: 10,
	// 100 ms apart); 0 means 10.
	Retries int
	// Blocking puts the clients' sockets in blocking mode (blocking.go).
	Blocking bool
}

var _ Dialer = DriverDialer{}

func (d DriverDialer) open(ctx context.Context, db string, blocking bool) (Session, error) {
	cfg := d.Config.Clone()
	cfg.DBName = db
	cfg.MultiStatements = true
	cfg.InterpolateParams = false
	// The session keeps its network connection: a cancelled run closes it,
	// which ends a statement in flight. Statements themselves run without
	// a context, because the driver hands every statement's context to a
	// watcher goroutine (a wake-up per query, which on 2 CPUs cost as much
	// as the query).
	var raw net.Conn
	dial := cfg.DialFunc
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
		if blocking && cfg.ReadTimeout == 0 && cfg.WriteTimeout == 0 && (cfg.Net == "tcp" || cfg.Net == "unix") {
			dial = sqlconn.DialBlocking
		}
	}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		raw = c
		return c, err
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	c, err := conn.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &driverSession{conn: c}
	if raw != nil {
		s.stop = context.AfterFunc(ctx, func() { raw.Close() })
	}
	if d.InitCommand != "" {
		if err := s.Run(ctx, d.InitCommand); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Main implements Dialer.
func (d DriverDialer) Main(ctx context.Context) (Session, error) { return d.open(ctx, "", false) }

// Client implements Dialer: slap_connect's ten tries, 100 ms apart.
func (d DriverDialer) Client(ctx context.Context, schema string) (Session, error) {
	tries := d.Retries
	if tries <= 0 {
		tries = 10
	}
	var err error
	for i := 0; i < tries; i++ {
		var s Session
		if s, err = d.open(ctx, schema, d.Blocking); err == nil {
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil, err
}

type driverSession struct {
	conn driver.Conn
	stop func() bool // stops the cancellation watch
}

func (s *driverSession) query(ctx context.Context, q string, each func(row []driver.Value)) error {
	qc, ok := s.conn.(driver.QueryerContext)
	if !ok {
		return errors.New("the MySQL driver cannot run plain queries")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rows, err := qc.QueryContext(context.Background(), q, nil)
	if err != nil {
		return err
	}
	defer rows.Close()
	multi, _ := rows.(driver.RowsNextResultSet)
	for {
		dest := make([]driver.Value, len(rows.Columns()))
		for {
			err := rows.Next(dest)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if each != nil && len(dest) > 0 {
				each(dest)
			}
		}
		if multi == nil || !multi.HasNextResultSet() {
			return nil
		}
		if err := multi.NextResultSet(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		each = nil // keys come from the first result only
	}
}

func (s *driverSession) Run(ctx context.Context, q string) error { return s.query(ctx, q, nil) }

func (s *driverSession) Column(ctx context.Context, q string) ([]string, error) {
	var out []string
	err := s.query(ctx, q, func(row []driver.Value) {
		switch v := row[0].(type) {
		case []byte:
			out = append(out, string(v))
		case nil:
			out = append(out, "")
		default:
			out = append(out, fmt.Sprint(v))
		}
	})
	return out, err
}

func (s *driverSession) Use(ctx context.Context, db string) error {
	return s.Run(ctx, "USE `"+db+"`")
}

func (s *driverSession) Close() error {
	if s.stop != nil {
		s.stop()
	}
	return s.conn.Close()
}

// errText is an error as mysql_error() words it: the server's message
// without the driver's "Error NNNN (SQLSTATE):" prefix.
func errText(err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Message
	}
	return err.Error()
}

// errNumber is mysql_errno(): the server's error number, or 2002 (can't
// connect) for a failure below the protocol.
func errNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 2002
}
