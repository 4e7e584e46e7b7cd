package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go

	"benchmatrix/catalog"
	"benchmatrix/exitcode"
)

// PasswordEnv holds the password of a MySQL/MariaDB history; when it is
// unset, $BENCHMATRIX_PASSWORD (the benchmarked server's) is read. A
// password is never taken from the DSN, never stored and never printed.
const PasswordEnv = "BENCHMATRIX_HISTORY_PASSWORD"

// EnvPath overrides the default SQLite path (a CI job's workspace, say).
const EnvPath = "BENCHMATRIX_HISTORY"

// DefaultPath is where the history lives when --history names none:
// $BENCHMATRIX_HISTORY, else $XDG_STATE_HOME/benchmatrix/history.db, else
// ~/.local/state/benchmatrix/history.db. A history is state (it must
// survive a cache purge: it is the record the alarms are computed from),
// not cache and not configuration.
func DefaultPath() (string, error) {
	if p := os.Getenv(EnvPath); p != "" {
		return p, nil
	}
	if s := os.Getenv("XDG_STATE_HOME"); s != "" && filepath.IsAbs(s) {
		return filepath.Join(s, "benchmatrix", "history.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("history: no default path ($%s, $XDG_STATE_HOME and $HOME unset): give --history PATH", EnvPath)
	}
	return filepath.Join(home, ".local", "state", "benchmatrix", "history.db"), nil
}

// Store is an open history: a SQLite file or a MySQL/MariaDB database.
type Store struct {
	db *sql.DB
	d  dialect
	// Where names the store for messages: the file, or mysql://user@host/db
	// (never a password).
	Where string
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// IsDSN says whether target names a MySQL/MariaDB history.
func IsDSN(target string) bool {
	return strings.HasPrefix(target, "mysql://") || strings.HasPrefix(target, "mariadb://")
}

// Open opens (creating and migrating as needed) the history at target: ""
// for the default SQLite file, a path, or mysql://user@host[:port]/db.
func Open(ctx context.Context, target string) (*Store, error) {
	if IsDSN(target) {
		return openMySQL(ctx, target)
	}
	if target == "" {
		p, err := DefaultPath()
		if err != nil {
			return nil, exitcode.UsageError(err)
		}
		target = p
	}
	return openSQLite(ctx, target)
}

func openSQLite(ctx context.Context, path string) (*Store, error) {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return nil, exitcode.UsageError(fmt.Errorf("history %s: is a directory (want a SQLite file)", path))
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("history %s: %w", path, err)
		}
	case err != nil:
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	// busy_timeout: a second process adding at the same time waits for
	// the first instead of failing; _txlock=immediate takes the write lock
	// at BEGIN, so two writers never deadlock on an upgrade.
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(30000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &Store{db: db, d: sqliteDialect, Where: path}
	// A damaged file is reported, never replaced.
	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&check); err != nil {
		db.Close()
		return nil, exitcode.UsageError(fmt.Errorf("history %s: not a usable SQLite database (left as it is): %w", path, err))
	}
	if check != "ok" {
		db.Close()
		return nil, exitcode.UsageError(fmt.Errorf("history %s: the SQLite file is damaged (quick_check: %s); left as it is", path, check))
	}
	if err := s.migrate(ctx, true); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// parseDSN reads mysql://user@host[:port]/db[?socket=PATH] into a driver
// configuration, the password from the environment.
func parseDSN(target string) (*mysql.Config, string, error) {
	u, err := url.Parse(target)
	if err != nil {
		// url's message quotes the input: it could hold a password.
		return nil, "", exitcode.UsageError(errors.New("--history: not a DSN of the form mysql://user@host:port/database"))
	}
	if _, has := u.User.Password(); has {
		return nil, "", exitcode.UsageError(fmt.Errorf("--history: the DSN holds a password; leave it out and give it in $%s (or $%s)", PasswordEnv, catalog.PasswordEnv))
	}
	db := strings.Trim(u.Path, "/")
	if db == "" || strings.Contains(db, "/") || strings.ContainsAny(db, "`'\" ") {
		return nil, "", exitcode.UsageError(fmt.Errorf("--history mysql://%s@%s/...: want one database name after the host", u.User.Username(), u.Host))
	}
	c := mysql.NewConfig()
	c.User = u.User.Username()
	if c.User == "" {
		c.User = "root"
	}
	if sock := u.Query().Get("socket"); sock != "" {
		c.Net, c.Addr = "unix", sock
	} else {
		host := u.Host
		if host == "" {
			host = "127.0.0.1"
		}
		if u.Port() == "" {
			host += ":3306"
		}
		c.Net, c.Addr = "tcp", host
	}
	c.Passwd = os.Getenv(PasswordEnv)
	if c.Passwd == "" {
		c.Passwd = os.Getenv(catalog.PasswordEnv)
	}
	c.ParseTime = true
	c.Timeout = 10 * time.Second
	c.Params = map[string]string{"sql_mode": "'STRICT_ALL_TABLES,NO_ZERO_DATE'"}
	return c, db, nil
}

func openMySQL(ctx context.Context, target string) (*Store, error) {
	c, dbname, err := parseDSN(target)
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("mysql://%s@%s/%s", c.User, c.Addr, dbname)
	// The database is created when missing: connect without one first.
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("history %s: %w", where, err))
	}
	root := sql.OpenDB(conn)
	defer root.Close()
	if _, err := root.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+dbname+"`"); err != nil {
		return nil, fmt.Errorf("history %s: %w", where, err)
	}
	c.DBName = dbname
	conn, err = mysql.NewConnector(c)
	if err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("history %s: %w", where, err))
	}
	s := &Store{db: sql.OpenDB(conn), d: mysqlDialect, Where: where}
	s.db.SetMaxOpenConns(4)
	if err := s.migrate(ctx, false); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}
