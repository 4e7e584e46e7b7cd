package oltp

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
)

// tableNumbers lists the tables a workload defines: 1..threads for
// bulk_insert (one per worker), 1..tables for the others.
func tableNumbers(o *Options) []int {
	n := o.Tables
	if o.Workload == "bulk_insert" {
		n = o.Threads
	}
	nums := make([]int, n)
	for i := range nums {
		nums[i] = i + 1
	}
	return nums
}

// createTableSQL is oltp_common.lua's DDL for the MySQL driver (§1.2).
func createTableSQL(o *Options, n int) string {
	if o.Workload == "bulk_insert" {
		return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS sbtest%d (
          id INTEGER NOT NULL,
          k INTEGER DEFAULT '0' NOT NULL,
          PRIMARY KEY (id))`, n)
	}
	idDef := "INTEGER NOT NULL AUTO_INCREMENT"
	if !o.AutoInc {
		idDef = "INTEGER NOT NULL"
	}
	idIndex := "PRIMARY KEY"
	if o.Secondary {
		idIndex = "KEY xid"
	}
	return fmt.Sprintf(`CREATE TABLE sbtest%d(
  id %s,
  k INTEGER DEFAULT '0' NOT NULL,
  c CHAR(120) DEFAULT '' NOT NULL,
  pad CHAR(60) DEFAULT '' NOT NULL,
  %s (id)
) /*! ENGINE = %s */ `, n, idDef, idIndex, o.StorageEngine)
}

// loadRows is how many rows prepare inserts per table: none for
// bulk_insert, and none for oltp_insert without auto_inc (its ids come from
// the whole 32-bit range, so preloaded 1..N would only invite collisions;
// sysbench ≥ 1.0.10 does the same).
func loadRows(o *Options) int {
	switch {
	case o.Workload == "bulk_insert":
		return 0
	case o.Workload == "oltp_insert" && !o.AutoInc:
		return 0
	}
	return o.TableSize
}

// logger serialises progress lines from parallel loaders.
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logger) printf(format string, args ...any) {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	fmt.Fprintf(l.w, format+"\n", args...)
	l.mu.Unlock()
}

// ExistingTablesError says prepare found tables it would overwrite.
type ExistingTablesError struct {
	DB     string
	Tables []string
}

func (e *ExistingTablesError) Error() string {
	return fmt.Sprintf("table %s already exists in database %s: run cleanup first, or set recreate=on to drop and recreate",
		strings.Join(e.Tables, ", "), e.DB)
}

// openDB opens a small pool on cfg for prepare, prewarm and cleanup.
func openDB(cfg *mysql.Config, conns int) (*sql.DB, error) {
	cn, err := newConnector(cfg, false)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(cn)
	db.SetMaxOpenConns(conns + 1)
	db.SetMaxIdleConns(conns + 1)
	return db, nil
}

// ensureDatabase creates cfg.DBName when it does not exist.
func ensureDatabase(ctx context.Context, cfg *mysql.Config, log *logger) error {
	if cfg.DBName == "" {
		return errors.New("no database given (mysql-db)")
	}
	c := cfg.Clone()
	c.DBName = ""
	db, err := openDB(c, 1)
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", cfg.DBName).Scan(&n)
	if err != nil {
		return fmt.Errorf("check database %s: %w", cfg.DBName, err)
	}
	if n > 0 {
		return nil
	}
	log.printf("Creating database '%s'...", cfg.DBName)
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(cfg.DBName)); err != nil {
		return fmt.Errorf("create database %s: %w", cfg.DBName, err)
	}
	return nil
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// existingTables returns which of the workload's tables exist.
func existingTables(ctx context.Context, db *sql.DB, o *Options) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'sbtest%'")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		have[strings.ToLower(name)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []string
	for _, n := range tableNumbers(o) {
		if have[tableName(n)] {
			out = append(out, tableName(n))
		}
	}
	return out, nil
}

func prepare(ctx context.Context, cfg *mysql.Config, o Options, w io.Writer) error {
	if !KnownWorkload(o.Workload) {
		return fmt.Errorf("unknown workload %q", o.Workload)
	}
	if (o.Workload == "select_random_points" || o.Workload == "select_random_ranges") && o.Tables != 1 {
		return fmt.Errorf("%s works on one table only (tables = %d)", o.Workload, o.Tables)
	}
	dist, err := NewDist(o)
	if err != nil {
		return err
	}
	log := &logger{w: w}
	if err := ensureDatabase(ctx, cfg, log); err != nil {
		return err
	}
	threads := max(o.Threads, 1)
	db, err := openDB(cfg, threads)
	if err != nil {
		return err
	}
	defer db.Close()
	existing, err := existingTables(ctx, db, &o)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	if len(existing) > 0 {
		if !o.Recreate {
			return &ExistingTablesError{DB: cfg.DBName, Tables: existing}
		}
		for _, t := range existing {
			log.printf("Dropping table '%s'...", t)
			if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
				return fmt.Errorf("drop %s: %w", t, err)
			}
		}
	}
	seed := effectiveSeed(o)
	nums := tableNumbers(&o)
	if o.Workload == "bulk_insert" {
		// sysbench creates these from one connection, sequentially.
		for _, n := range nums {
			log.printf("Creating table 'sbtest%d'...", n)
			if _, err := db.ExecContext(ctx, createTableSQL(&o, n)); err != nil {
				return fmt.Errorf("create sbtest%d: %w", n, err)
			}
		}
		return nil
	}
	// Worker t loads tables t+1, t+1+threads, ... (§1.3).
	return perTable(ctx, db, threads, nums, func(ctx context.Context, c *sql.Conn, n int) error {
		return loadTable(ctx, c, &o, dist, NewRand(seed, 1<<20+n), n, log)
	})
}

// perTable runs fn for every table on threads connections, worker t taking
// tables t, t+threads, ... of nums, as sysbench's prepare and prewarm
// share tables out. The first error cancels the others and is returned.
func perTable(ctx context.Context, db *sql.DB, threads int, nums []int, fn func(ctx context.Context, c *sql.Conn, n int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, threads)
	for t := 0; t < threads; t++ {
		go func() {
			errs <- func() error {
				c, err := db.Conn(ctx)
				if err != nil {
					return err
				}
				defer c.Close()
				for i := t; i < len(nums); i += threads {
					if err := fn(ctx, c, nums[i]); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	var first error
	for t := 0; t < threads; t++ {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	return first
}

// loadTable creates, fills and indexes one table. Rows are generated by a
// second goroutine while the previous statement runs.
func loadTable(ctx context.Context, c *sql.Conn, o *Options, dist *Dist, r *Rand, n int, log *logger) error {
	t := tableName(n)
	log.printf("Creating table '%s'...", t)
	if _, err := c.ExecContext(ctx, createTableSQL(o, n)); err != nil {
		return fmt.Errorf("create %s: %w", t, err)
	}
	rows := loadRows(o)
	if rows > 0 {
		log.printf("Inserting %d records into '%s'", rows, t)
		load := insertRows
		if canLoadLocal(ctx, c, n) {
			load = loadRowsLocal
		}
		if err := load(ctx, c, o, dist, r, n, rows); err != nil {
			return fmt.Errorf("load %s: %w", t, err)
		}
	}
	if o.CreateSecondary {
		log.printf("Creating a secondary index on '%s'...", t)
		if _, err := c.ExecContext(ctx, fmt.Sprintf("CREATE INDEX k_%d ON sbtest%d(k)", n, n)); err != nil {
			return fmt.Errorf("create index k_%d: %w", n, err)
		}
	}
	return nil
}

// insertRows sends the table's rows as ~512 KiB multi-row INSERTs, as
// sysbench does; loadRowsLocal is the faster path used when the server
// accepts it.
func insertRows(ctx context.Context, c *sql.Conn, o *Options, dist *Dist, r *Rand, n, rows int) error {
	prefix := "INSERT INTO " + tableName(n) + "(k, c, pad) VALUES"
	if !o.AutoInc {
		prefix = "INSERT INTO " + tableName(n) + "(id, k, c, pad) VALUES"
	}
	stmts := make(chan string, 2)
	genCtx, stopGen := context.WithCancel(ctx)
	defer stopGen()
	go func() {
		defer close(stmts)
		bb := newBulkBuffer(prefix)
		var row []byte
		var cv [cLen]byte
		var pv [padLen]byte
		size := uint32(o.TableSize)
		for i := 1; i <= rows; i++ {
			r.Digits(cv[:], 11)
			r.Digits(pv[:], 11)
			k := dist.Draw(r, 1, size)
			row = append(row[:0], '(')
			if !o.AutoInc {
				row = strconv.AppendInt(row, int64(i), 10)
				row = append(row, ", "...)
			}
			row = strconv.AppendUint(row, uint64(k), 10)
			row = append(row, ", '"...)
			row = append(row, cv[:]...)
			row = append(row, "', '"...)
			row = append(row, pv[:]...)
			row = append(row, "')"...)
			if !bb.fits(len(row)) {
				select {
				case stmts <- bb.take():
				case <-genCtx.Done():
					return
				}
			}
			bb.add(row)
		}
		if bb.rows > 0 {
			select {
			case stmts <- bb.take():
			case <-genCtx.Done():
			}
		}
	}()
	for q := range stmts {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func cleanup(ctx context.Context, cfg *mysql.Config, o Options, w io.Writer) error {
	log := &logger{w: w}
	db, err := openDB(cfg, 1)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, n := range tableNumbers(&o) {
		log.printf("Dropping table 'sbtest%d'...", n)
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+tableName(n)); err != nil {
			return fmt.Errorf("drop sbtest%d: %w", n, err)
		}
	}
	return nil
}

// Prepare's fast path: the same rows sent as LOAD DATA LOCAL INFILE from
// memory, in statements of the same ~512 KiB, each autocommitted like
// sysbench's INSERTs. The server parses the CSV rows more cheaply than a
// multi-row INSERT's literals: on MariaDB 10.11 (2 cores, 4×100k rows, 2
// threads) prepare took 1.05 s instead of 1.45 s. The tables end up
// identical (TestPrepareMatchesSysbench); what differs is the server's
// statement counters (Com_load instead of Com_insert) and, slightly, the
// rows per statement, as CSV rows are shorter than VALUES tuples.
// Servers that refuse LOCAL INFILE (local_infile=OFF, MySQL 8's default)
// get the INSERTs. Measured and rejected: one transaction per table with
// unique_checks=0 and foreign_key_checks=0 for InnoDB's bulk-insert path
// (1.9 s), 4 MiB statements (1.6 s), a connection per table (no change).

// localInfileSeq names the driver's reader handlers, which are global.
var localInfileSeq atomic.Int64

// canLoadLocal tells whether loadRowsLocal can fill table n through c:
// the session's AUTO_INCREMENT steps are 1 (see loadRowsLocal) and the
// server takes LOAD DATA LOCAL INFILE, tried by loading nothing into the
// (empty) table.
func canLoadLocal(ctx context.Context, c *sql.Conn, n int) bool {
	var inc, off int64
	if err := c.QueryRowContext(ctx, "SELECT @@session.auto_increment_increment, @@session.auto_increment_offset").Scan(&inc, &off); err != nil || inc != 1 || off != 1 {
		return false
	}
	name := fmt.Sprintf("benchmatrix-probe-%d", localInfileSeq.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return strings.NewReader("") })
	defer mysql.DeregisterReaderHandler(name)
	_, err := c.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+tableName(n)+" (k)")
	return err == nil
}

// loadRowsLocal sends the table's rows as LOAD DATA LOCAL INFILE
// statements of at most bulkPacketSize bytes of CSV each, generated while
// the previous one runs.
func loadRowsLocal(ctx context.Context, c *sql.Conn, o *Options, dist *Dist, r *Rand, n, rows int) error {
	// The ids are always explicit: LOAD DATA is a "bulk insert" whose row
	// count InnoDB does not know in advance, so AUTO_INCREMENT would
	// reserve ids in growing blocks and leave gaps between statements
	// (ids up to 4262 for 3000 rows). Explicit 1..N give sysbench's ids and
	// AUTO_INCREMENT = N+1; canLoadLocal checks that auto_increment_increment
	// and _offset are 1, as then sysbench's INSERTs get exactly those ids.
	stmt := "LOAD DATA LOCAL INFILE 'Reader::%s' INTO TABLE " + tableName(n) + " FIELDS TERMINATED BY ',' (id, k, c, pad)"
	name := fmt.Sprintf("benchmatrix-load-%d", localInfileSeq.Add(1))
	stmt = fmt.Sprintf(stmt, name)
	var cur []byte // the chunk the running statement reads
	mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(cur) })
	defer mysql.DeregisterReaderHandler(name)

	chunks := make(chan []byte, 2)
	genCtx, stopGen := context.WithCancel(ctx)
	defer stopGen()
	go func() {
		defer close(chunks)
		var cv [cLen]byte
		var pv [padLen]byte
		size := uint32(o.TableSize)
		buf := make([]byte, 0, bulkPacketSize)
		for i := 1; i <= rows; i++ {
			r.Digits(cv[:], 11)
			r.Digits(pv[:], 11)
			k := dist.Draw(r, 1, size)
			if len(buf)+cLen+padLen+32 > bulkPacketSize {
				select {
				case chunks <- buf:
				case <-genCtx.Done():
					return
				}
				buf = make([]byte, 0, bulkPacketSize)
			}
			buf = strconv.AppendInt(buf, int64(i), 10)
			buf = append(buf, ',')
			buf = strconv.AppendUint(buf, uint64(k), 10)
			buf = append(buf, ',')
			buf = append(buf, cv[:]...)
			buf = append(buf, ',')
			buf = append(buf, pv[:]...)
			buf = append(buf, '\n')
		}
		if len(buf) > 0 {
			select {
			case chunks <- buf:
			case <-genCtx.Done():
			}
		}
	}()
	for cur = range chunks {
		if _, err := c.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return ctx.Err()
}
