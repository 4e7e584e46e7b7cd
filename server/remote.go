package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
)

// This file holds what the providers that reach their server over the
// network (docker, external) share: flavor detection from SQL, password
// hygiene in errors, and the emergency-stop hook beside the sandbox's own.

// killOthers runs after KillAll has killed the sandboxes: it kills the
// containers this process started and puts external servers' globals back.
func killOthers() {
	for _, d := range liveDockers.all() {
		d.kill()
	}
	for _, e := range liveExternals.all() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = e.Stop(ctx)
		cancel()
	}
}

// detectFlavor reads what the server says it is.
func detectFlavor(ctx context.Context, db *sql.DB) (catalog.Flavor, string, error) {
	var version, comment sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT @@version, @@version_comment").Scan(&version, &comment); err != nil {
		return "", "", fmt.Errorf("read @@version: %w", err)
	}
	return flavorOf(version.String, comment.String), version.String, nil
}

func flavorOf(version, comment string) catalog.Flavor {
	if strings.Contains(strings.ToLower(version+" "+comment), "mariadb") {
		return catalog.MariaDB
	}
	return catalog.MySQL
}

// hidePassword makes sure err's text never shows the password, whatever the
// layers below put in it. errors.As and errors.Is still see the original.
func hidePassword(err error, password string) error {
	if err == nil || password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), password, "********"), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// globalValue is a variable's value as read, NULL kept apart from "NULL".
type globalValue struct {
	text string
	null bool
}

func readGlobalValue(ctx context.Context, db *sql.DB, name string) (globalValue, error) {
	if !validName(name) {
		return globalValue{}, fmt.Errorf("%q is not a valid variable name", name)
	}
	var v sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL."+name).Scan(&v); err != nil {
		return globalValue{}, fmt.Errorf("read @@global.%s: %w", name, err)
	}
	return globalValue{text: v.String, null: !v.Valid}, nil
}

func (v globalValue) sql() string {
	if v.null {
		return "NULL"
	}
	return SQLValue(v.text)
}

func (v globalValue) String() string {
	if v.null {
		return "NULL"
	}
	return v.text
}

// setGlobal runs one SET GLOBAL, mapping "read only variable" to
// *ReadOnlyError as ApplyGlobals does.
func setGlobal(ctx context.Context, db *sql.DB, name, value string) error {
	if !validName(name) {
		return fmt.Errorf("%q is not a valid variable name", name)
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("SET GLOBAL %s = %s", name, value)); err != nil {
		if isReadOnly(err) {
			return &ReadOnlyError{Name: name, Err: err}
		}
		return fmt.Errorf("set %s = %s: %w", name, value, err)
	}
	return nil
}

func isReadOnly(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == errReadOnlyVariable
}

// liveSet is a registry of things to clean up on an emergency stop.
type liveSet[T comparable] struct {
	mu sync.Mutex
	m  map[T]struct{}
}

func (l *liveSet[T]) add(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[T]struct{}{}
	}
	l.m[v] = struct{}{}
}

func (l *liveSet[T]) remove(v T) { l.mu.Lock(); delete(l.m, v); l.mu.Unlock() }

func (l *liveSet[T]) all() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]T, 0, len(l.m))
	for v := range l.m {
		out = append(out, v)
	}
	return out
}
