package history

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"benchmatrix/exitcode"
)

// dialect is what differs between SQLite and MySQL/MariaDB; the schema
// itself is the same text for both (times are RFC 3339 text in UTC, JSON
// is text).
type dialect struct {
	name         string
	insertIgnore string
}

var (
	sqliteDialect = dialect{name: "sqlite", insertIgnore: "INSERT OR IGNORE"}
	mysqlDialect  = dialect{name: "mysql", insertIgnore: "INSERT IGNORE"}
)

// migrations[i] brings the schema from version i to i+1. Append only:
// a released step never changes.
var migrations = [][]string{
	{
		`CREATE TABLE bmh_runs (
			id VARCHAR(16) NOT NULL PRIMARY KEY,
			content_hash CHAR(64) NOT NULL,
			experiment VARCHAR(255) NOT NULL,
			started VARCHAR(40) NOT NULL,
			finished VARCHAR(40) NOT NULL,
			recorded VARCHAR(40) NOT NULL,
			status VARCHAR(32) NOT NULL,
			manifest_sha256 VARCHAR(64) NOT NULL,
			tool_version VARCHAR(255) NOT NULL,
			tool_commit VARCHAR(64) NOT NULL,
			server_flavor VARCHAR(64) NOT NULL,
			server_version VARCHAR(255) NOT NULL,
			host MEDIUMTEXT NOT NULL,
			variables MEDIUMTEXT NOT NULL,
			git_commit VARCHAR(64) NOT NULL,
			git_branch VARCHAR(255) NOT NULL,
			label VARCHAR(255) NOT NULL,
			source VARCHAR(1024) NOT NULL
		)`,
		`CREATE INDEX bmh_runs_started ON bmh_runs (experiment, started)`,
		`CREATE TABLE bmh_series (
			id VARCHAR(16) NOT NULL PRIMARY KEY,
			experiment VARCHAR(255) NOT NULL,
			cell VARCHAR(255) NOT NULL,
			workload_sha CHAR(64) NOT NULL,
			workload MEDIUMTEXT NOT NULL,
			first_run VARCHAR(16) NOT NULL
		)`,
		`CREATE TABLE bmh_cells (
			run_id VARCHAR(16) NOT NULL,
			cell VARCHAR(255) NOT NULL,
			series_id VARCHAR(16) NOT NULL,
			scenario VARCHAR(255) NOT NULL,
			params MEDIUMTEXT NOT NULL,
			baseline_cell VARCHAR(255) NOT NULL,
			ok_repeats INTEGER NOT NULL,
			failed_repeats INTEGER NOT NULL,
			tps DOUBLE NOT NULL, tps_lo DOUBLE NOT NULL, tps_hi DOUBLE NOT NULL,
			qps DOUBLE NOT NULL,
			lat_avg DOUBLE NOT NULL, lat_p95 DOUBLE NOT NULL,
			lat_p99 DOUBLE NOT NULL, p99_lo DOUBLE NOT NULL, p99_hi DOUBLE NOT NULL,
			errors BIGINT NOT NULL,
			ratio DOUBLE NOT NULL, ratio_lo DOUBLE NOT NULL, ratio_hi DOUBLE NOT NULL,
			effective MEDIUMTEXT NOT NULL,
			PRIMARY KEY (run_id, cell),
			FOREIGN KEY (run_id) REFERENCES bmh_runs (id) ON DELETE CASCADE
		)`,
		`CREATE INDEX bmh_cells_series ON bmh_cells (series_id)`,
		`CREATE TABLE bmh_samples (
			run_id VARCHAR(16) NOT NULL,
			cell VARCHAR(255) NOT NULL,
			rep INTEGER NOT NULL,
			status VARCHAR(32) NOT NULL,
			tps DOUBLE NOT NULL, qps DOUBLE NOT NULL,
			lat_p95 DOUBLE NOT NULL, lat_p99 DOUBLE NOT NULL,
			PRIMARY KEY (run_id, cell, rep),
			FOREIGN KEY (run_id) REFERENCES bmh_runs (id) ON DELETE CASCADE
		)`,
	},
	// 2: the full run (its run.json, gzip), so that `compare --history`
	// can compare against a recorded run without its directory. Runs
	// recorded before have no row here (fullrun.go says so).
	{
		`CREATE TABLE bmh_run_json (
			run_id VARCHAR(16) NOT NULL PRIMARY KEY,
			encoding VARCHAR(16) NOT NULL,
			json_bytes BIGINT NOT NULL,
			body LONGBLOB NOT NULL,
			FOREIGN KEY (run_id) REFERENCES bmh_runs (id) ON DELETE CASCADE
		)`,
	},
}

// FullRunSchema is the schema version from which a history keeps each
// run's run.json (bmh_run_json).
const FullRunSchema = 2

// SchemaVersion is the schema this build writes.
var SchemaVersion = len(migrations)

// migrate creates the tables or brings them to SchemaVersion, under a lock
// so that two processes opening a new history at once do it once.
// exclusive: the file must hold only a history (SQLite: a file with other
// tables is not ours, and is left alone); a MySQL database may hold other
// tables, benchmatrix's all start with bmh_.
func (s *Store) migrate(ctx context.Context, exclusive bool) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.openErr(err)
	}
	defer conn.Close()
	if s.d.name == "mysql" {
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(CONCAT('benchmatrix_history.', DATABASE()), 60)").Scan(&got); err != nil {
			return s.openErr(err)
		}
		if got.Int64 != 1 {
			return fmt.Errorf("history %s: another benchmatrix holds the schema lock", s.Where)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK(CONCAT('benchmatrix_history.', DATABASE()))") //nolint:errcheck
	}
	// SQLite: the whole migration is one immediate (write-locked)
	// transaction, so a second process waits and then finds it done.
	var q querier = conn
	commit := func() error { return nil }
	if s.d.name == "sqlite" {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return s.openErr(err)
		}
		defer tx.Rollback() //nolint:errcheck
		q, commit = tx, tx.Commit
	}
	if err := s.migrateSteps(ctx, q, exclusive); err != nil {
		return err
	}
	if err := commit(); err != nil {
		return s.openErr(err)
	}
	return nil
}

// querier is a *sql.Conn or a *sql.Tx.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) migrateSteps(ctx context.Context, conn querier, exclusive bool) error {
	tables, err := s.tables(ctx, conn)
	if err != nil {
		return s.openErr(err)
	}
	version := 0
	if tables["bmh_schema"] {
		if err := conn.QueryRowContext(ctx, "SELECT MAX(version) FROM bmh_schema").Scan(&version); err != nil {
			return s.openErr(err)
		}
	} else if exclusive && len(tables) > 0 {
		names := make([]string, 0, len(tables))
		for t := range tables {
			names = append(names, t)
		}
		return exitcode.UsageError(fmt.Errorf("history %s: a SQLite file that is not a benchmatrix history (it holds tables %s); left as it is", s.Where, strings.Join(names, ", ")))
	}
	if version > SchemaVersion {
		return exitcode.UsageError(fmt.Errorf("history %s: schema version %d was written by a newer benchmatrix (this one knows %d)", s.Where, version, SchemaVersion))
	}
	if version == SchemaVersion {
		return nil
	}
	if !tables["bmh_schema"] {
		if _, err := conn.ExecContext(ctx, "CREATE TABLE bmh_schema (version INTEGER NOT NULL, applied VARCHAR(40) NOT NULL)"); err != nil {
			return s.openErr(err)
		}
	}
	for v := version; v < SchemaVersion; v++ {
		// MySQL commits DDL implicitly; SQLite runs each step in a
		// transaction. Either way the version row follows its step.
		for _, stmt := range migrations[v] {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("history %s: migrate to schema %d: %w", s.Where, v+1, err)
			}
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO bmh_schema (version, applied) VALUES (?, ?)", v+1, nowText()); err != nil {
			return fmt.Errorf("history %s: migrate to schema %d: %w", s.Where, v+1, err)
		}
	}
	return nil
}

func (s *Store) tables(ctx context.Context, conn querier) (map[string]bool, error) {
	q := "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
	if s.d.name == "mysql" {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
	}
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[n] = true
	}
	return out, rows.Err()
}

func (s *Store) openErr(err error) error {
	return fmt.Errorf("history %s: %w", s.Where, err)
}
