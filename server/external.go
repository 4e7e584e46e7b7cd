package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
)

// ExternalConfig says how to reach a server benchmatrix does not own.
type ExternalConfig struct {
	// DSN in go-sql-driver form: user:pass@tcp(host:port)/db. The password
	// may be left out of it (see Password). Not serialised: it may hold
	// the password.
	DSN string `json:"-"`
	// Password is used when the DSN has none; when both are empty,
	// $BENCHMATRIX_PASSWORD is read.
	Password string `json:"-"`
	// ConnectTimeout bounds the first connection (default 5s), so an
	// unreachable server fails within seconds, naming its address.
	ConnectTimeout time.Duration
}

// External is a server someone else runs. benchmatrix never restarts or
// stops it: only dynamic variables change, each one's original value is
// remembered before its first change, and Stop puts them all back.
type External struct {
	cfg    *mysql.Config // holds the password: never print it
	db     *sql.DB
	flavor catalog.Flavor
	ver    string

	mu      sync.Mutex
	orig    map[string]globalValue // by variable name, value before our first change
	order   []string               // names in the order of their first change
	startup []Setting
	closed  bool
	// recovered says what ConnectExternal put back that a killed
	// benchmatrix left changed (journal.go).
	recovered []string
	// started is when the server started (Unix seconds, from its
	// Uptime; 0 when unknown): a journal of another start is void.
	started int64
}

// Recovered implements Borrowed: what connecting put back that a killed
// benchmatrix process had left changed on this server.
func (e *External) Recovered() []string { return e.recovered }

var _ Server = (*External)(nil)

var liveExternals liveSet[*External]

// RestartNotAllowedError says a setting needs a restart, and the server is
// external, so it is never restarted. Current is the server's value, Wanted
// the experiment's.
type RestartNotAllowedError struct {
	Address, Name, Current, Wanted string
}

func (e *RestartNotAllowedError) Error() string {
	return fmt.Sprintf("external server %s: %s is %s, the experiment needs %s; it changes only with a restart, "+
		"and benchmatrix never restarts an external server (set it on the server, or drop it from the experiment)",
		e.Address, e.Name, e.Current, e.Wanted)
}

// ConnectExternal connects to the server and reads what it is.
func ConnectExternal(ctx context.Context, cfg ExternalConfig) (*External, error) {
	c, err := mysql.ParseDSN(cfg.DSN)
	if err != nil {
		// The driver's parse errors do not quote the DSN, but be sure.
		return nil, fmt.Errorf("external server DSN: %w", hidePassword(hidePassword(err, cfg.DSN), cfg.Password))
	}
	// The database a DSN names is the workload's schema (the plan took
	// it from there), which the runner creates if it is missing: the
	// connection itself needs none.
	c.DBName = ""
	if c.Passwd == "" {
		c.Passwd = cfg.Password
	}
	if c.Passwd == "" {
		c.Passwd = os.Getenv(catalog.PasswordEnv)
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 5 * time.Second
	}
	c.Timeout = cfg.ConnectTimeout
	e := &External{cfg: c, orig: map[string]globalValue{}}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, e.wrap("connect", err)
	}
	e.db = sql.OpenDB(conn)
	pctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	if err := e.db.PingContext(pctx); err != nil {
		e.db.Close()
		if pctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("no answer within %s (%w)", cfg.ConnectTimeout, err)
		}
		return nil, e.wrap(fmt.Sprintf("connect as %s", c.User), err)
	}
	if e.flavor, e.ver, err = detectFlavor(pctx, e.db); err != nil {
		e.db.Close()
		return nil, e.wrap("connect", err)
	}
	e.started = serverStarted(pctx, e.db)
	if e.recovered, err = e.recoverJournals(ctx); err != nil {
		e.db.Close()
		return nil, err
	}
	liveExternals.add(e)
	return e, nil
}

// wrap names the server in an error and keeps the password out of it.
func (e *External) wrap(what string, err error) error {
	return hidePassword(fmt.Errorf("external server %s: %s: %w", e.address(), what, err), e.cfg.Passwd)
}

func (e *External) address() string { return e.cfg.Addr }

// Info implements Server. It never holds the password.
func (e *External) Info() Info {
	return Info{Provider: "external", Flavor: e.flavor, Version: e.ver, Address: e.address()}
}

// Endpoint implements Server. The copy carries the password, as a client
// needs it; do not log it (FormatDSN would show it).
func (e *External) Endpoint() *mysql.Config {
	c := e.cfg.Clone()
	c.Timeout = 10 * time.Second
	return c
}

// Startup implements Server: the settings last confirmed by Restart.
func (e *External) Startup() []Setting {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.startup)
}

// LogTail implements Server: an external server's log is out of reach.
func (e *External) LogTail(int) string { return "" }

// Restart implements Server without restarting: every restart-only setting
// must already have the wanted value (else *RestartNotAllowedError), and
// the dynamic ones are applied with SET GLOBAL (to be restored by Stop).
// So a cell whose startup options the server already satisfies runs, and
// one that would need a real restart fails, naming the variable.
func (e *External) Restart(ctx context.Context, startup []Setting) error {
	if err := e.VerifyStartup(ctx, startup); err != nil {
		return err
	}
	var dynamic []Setting
	for _, s := range startup {
		if !restartOnly(e.flavor, e.ver, s.Name) {
			dynamic = append(dynamic, Setting{Name: s.Name, Value: startupValue(s)})
		}
	}
	if _, err := e.ApplyGlobals(ctx, dynamic); err != nil {
		var ro *ReadOnlyError
		if errors.As(err, &ro) {
			cur, _ := Variables(ctx, e.db, ro.Name)
			want := ""
			for _, s := range dynamic {
				if catalog.VariableName(s.Name) == ro.Name {
					want = s.Value
				}
			}
			return &RestartNotAllowedError{Address: e.address(), Name: ro.Name, Current: cur[ro.Name], Wanted: want}
		}
		return err
	}
	e.mu.Lock()
	e.startup = slices.Clone(startup)
	e.mu.Unlock()
	return nil
}

// VerifyStartup compares the restart-only settings among startup with the
// server's values. Every difference is a *RestartNotAllowedError naming the
// variable and both values (joined when there are several); other settings
// are left to ApplyGlobals.
func (e *External) VerifyStartup(ctx context.Context, startup []Setting) error {
	var names []string
	for _, s := range startup {
		if restartOnly(e.flavor, e.ver, s.Name) {
			names = append(names, catalog.VariableName(s.Name))
		}
	}
	if len(names) == 0 {
		return nil
	}
	// SHOW VARIABLES spells booleans ON/OFF, as people write them.
	cur, err := Variables(ctx, e.db, names...)
	if err != nil {
		return e.wrap("startup options", err)
	}
	var errs []error
	for _, s := range startup {
		name := catalog.VariableName(s.Name)
		if !restartOnly(e.flavor, e.ver, name) {
			continue
		}
		v, ok := cur[name]
		if !ok {
			errs = append(errs, fmt.Errorf("external server %s: startup option %s: the server has no such variable", e.address(), name))
			continue
		}
		if !SameValue(name, startupValue(s), v) {
			errs = append(errs, &RestartNotAllowedError{Address: e.address(), Name: name, Current: v, Wanted: s.Value})
		}
	}
	return errors.Join(errs...)
}

// startupValue is what a startup option reads back as: --log-bin=NAME
// turns log_bin ON, whatever the base name.
func startupValue(s Setting) string {
	if catalog.VariableName(s.Name) == "log_bin" {
		if _, ok := boolWord(s.Value); !ok {
			return "ON"
		}
	}
	return s.Value
}

// ApplyGlobals sets each variable with SET GLOBAL and reads every one back,
// like the package's ApplyGlobals, after remembering each variable's value
// before its first change so Restore can put it back. A variable whose SET
// fails is not remembered (it did not change).
func (e *External) ApplyGlobals(ctx context.Context, settings []Setting) (map[string]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("external server %s: already stopped", e.address())
	}
	for _, s := range settings {
		name := catalog.VariableName(s.Name)
		_, seen := e.orig[name]
		var before globalValue
		if !seen {
			v, err := readGlobalValue(ctx, e.db, name)
			if err != nil {
				return nil, e.wrap("apply", err)
			}
			before = v
			// On disk before the change: a killed run's next one puts
			// it back.
			e.orig[name] = before
			e.order = append(e.order, name)
			if err := e.writeJournal(); err != nil {
				return nil, e.wrap("journal the original of "+name, err)
			}
		}
		if err := setGlobal(ctx, e.db, name, SQLValue(s.Value)); err != nil {
			if !seen {
				// Refused: nothing changed, nothing to put back.
				delete(e.orig, name)
				e.order = e.order[:len(e.order)-1]
				_ = e.writeJournal()
			}
			return nil, hidePassword(err, e.cfg.Passwd)
		}
	}
	eff, err := CheckGlobals(ctx, e.db, settings)
	return eff, hidePassword(err, e.cfg.Passwd)
}

// Originals returns the values Restore would put back, by variable name.
func (e *External) Originals() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]string, len(e.orig))
	for k, v := range e.orig {
		out[k] = v.String()
	}
	return out
}

// Restore sets every variable ApplyGlobals changed back to its original
// value, latest change first. It tries them all; those that fail stay
// remembered for another try and are named in the error.
func (e *External) Restore(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.restoreLocked(ctx)
}

func (e *External) restoreLocked(ctx context.Context) error {
	var errs []error
	var failed []string
	for i := len(e.order) - 1; i >= 0; i-- {
		name := e.order[i]
		v := e.orig[name]
		if err := setGlobal(ctx, e.db, name, v.sql()); err != nil {
			errs = append(errs, fmt.Errorf("restore %s to %s: %w", name, v, err))
			failed = append(failed, name)
			continue
		}
		delete(e.orig, name)
	}
	slices.Reverse(failed)
	e.order = failed
	if err := e.writeJournal(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return e.wrap("restore globals", errors.Join(errs...))
	}
	return nil
}

// Stop implements Server: it restores the globals and closes the
// connections. The server itself keeps running. A cancelled ctx still gets
// up to 30 s for the restore, so an interrupted run leaves no trace.
func (e *External) Stop(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := e.restoreLocked(rctx)
	e.closed = true
	if cerr := e.db.Close(); cerr != nil && err == nil {
		err = e.wrap("close", cerr)
	}
	liveExternals.remove(e)
	return err
}

// LedgerTable is the table, in the workload's schema of an external server,
// where benchmatrix records the tables it created, with their creation time:
// a table of the workload's name that is not in it (or was created again
// since) is someone else's, and is neither used nor dropped.
const LedgerTable = "benchmatrix_tables"

// ForeignTables lists the tables in schema that benchmatrix did not create:
// those ours rejects by name, and those of our names that the ledger does
// not record as ours (a user's own sbtest1, say).
func (e *External) ForeignTables(ctx context.Context, schema string, ours func(table string) bool) ([]string, error) {
	ledger, err := e.ledger(ctx, schema)
	if err != nil {
		return nil, err
	}
	rows, err := e.db.QueryContext(ctx,
		"SELECT TABLE_NAME, COALESCE(CAST(CREATE_TIME AS CHAR), '') FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME", schema)
	if err != nil {
		return nil, e.wrap("list tables in "+schema, err)
	}
	defer rows.Close()
	var foreign []string
	for rows.Next() {
		var t, created string
		if err := rows.Scan(&t, &created); err != nil {
			return nil, e.wrap("list tables in "+schema, err)
		}
		if t == LedgerTable {
			continue
		}
		if ours == nil || !ours(t) {
			foreign = append(foreign, t)
			continue
		}
		if at, ok := ledger[t]; !ok || at != created {
			foreign = append(foreign, t+" (not created by benchmatrix)")
		}
	}
	if err := rows.Err(); err != nil {
		return nil, e.wrap("list tables in "+schema, err)
	}
	return foreign, nil
}

// ledger reads LedgerTable: table name → creation time recorded.
func (e *External) ledger(ctx context.Context, schema string) (map[string]string, error) {
	out := map[string]string{}
	rows, err := e.db.QueryContext(ctx, "SELECT table_name, created FROM `"+schema+"`.`"+LedgerTable+"`")
	if err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) && (me.Number == 1146 || me.Number == 1049) {
			return out, nil // no ledger (or no schema) yet: nothing is ours
		}
		return nil, e.wrap("read "+LedgerTable, err)
	}
	defer rows.Close()
	for rows.Next() {
		var t, at string
		if err := rows.Scan(&t, &at); err != nil {
			return nil, e.wrap("read "+LedgerTable, err)
		}
		out[t] = at
	}
	return out, rows.Err()
}

// Claim records tables benchmatrix has just created in schema, with their
// creation time, in LedgerTable (created if missing).
func (e *External) Claim(ctx context.Context, schema string, tables []string) error {
	q := "`" + schema + "`.`" + LedgerTable + "`"
	if _, err := e.db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+q+
		" (table_name VARCHAR(64) NOT NULL PRIMARY KEY, created VARCHAR(32) NOT NULL)"+
		" COMMENT 'tables benchmatrix created here; it touches no other'"); err != nil {
		return e.wrap("create "+LedgerTable, err)
	}
	for _, t := range tables {
		if _, err := e.db.ExecContext(ctx, "REPLACE INTO "+q+" (table_name, created)"+
			" SELECT TABLE_NAME, COALESCE(CAST(CREATE_TIME AS CHAR), '') FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
			schema, t); err != nil {
			return e.wrap("record "+t+" in "+LedgerTable, err)
		}
	}
	return nil
}

// String shows the configuration without the password.
func (c ExternalConfig) String() string {
	dsn := "(invalid DSN)"
	if m, err := mysql.ParseDSN(c.DSN); err == nil {
		if m.Passwd != "" {
			m.Passwd = "********"
		}
		dsn = m.FormatDSN()
	}
	pw := ""
	if c.Password != "" {
		pw = "********"
	}
	return fmt.Sprintf("{DSN:%s Password:%s ConnectTimeout:%s}", dsn, pw, c.ConnectTimeout)
}

// String names the server without its password.
func (e *External) String() string {
	return fmt.Sprintf("external %s@%s", e.cfg.User, e.address())
}

// providerOptions is Galera's variable of provider options.
const providerOptions = "wsrep_provider_options"

// SetProviderOption sets one Galera provider option (gcs.fc_limit) with
// SET GLOBAL wsrep_provider_options = 'name=value', which changes that
// option only. Before the first change it remembers the option's value as
// 'name=old' under wsrep_provider_options, so Restore (and a later run,
// from the journal) sets back that one option the same way.
func (e *External) SetProviderOption(ctx context.Context, name, value string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("external server %s: already stopped", e.address())
	}
	if prev, seen := e.orig[providerOptions]; seen {
		if !strings.HasPrefix(prev.text, name+"=") {
			return fmt.Errorf("external server %s: %s: already changed as a whole (%s), not by option", e.address(), providerOptions, prev)
		}
	} else {
		all, err := readGlobalValue(ctx, e.db, providerOptions)
		if err != nil {
			return e.wrap("set "+name, err)
		}
		old, ok := ProviderOption(all.text, name)
		if !ok {
			return fmt.Errorf("external server %s: %s has no %s (is it a Galera node?)", e.address(), providerOptions, name)
		}
		e.orig[providerOptions] = globalValue{text: name + "=" + old}
		e.order = append(e.order, providerOptions)
		if err := e.writeJournal(); err != nil {
			return e.wrap("journal the original of "+name, err)
		}
	}
	if err := setGlobal(ctx, e.db, providerOptions, SQLValue(name+"="+value)); err != nil {
		return e.wrap("set "+name, err)
	}
	return nil
}

// ProviderOption finds one option in Galera's wsrep_provider_options text
// ("base_port = 4567; gcs.fc_limit = 16; ...").
func ProviderOption(all, name string) (string, bool) {
	for _, kv := range strings.Split(all, ";") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}
