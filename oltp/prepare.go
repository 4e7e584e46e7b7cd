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
	if w := spec(*o); w.tableNums != nil {
		return w.tableNums(o)
	}
	n := TableCount(*o)
	nums := make([]int, n)
	for i := range nums {
		nums[i] = i + 1
	}
	return nums
}

// createTableSQL is oltp_common.lua's DDL for the MySQL driver (§1.2).
func createTableSQL(o *Options, n int) string {
	if spec(*o).Family == "bulk" {
		return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS sbtest%d (
          id INTEGER NOT NULL,
          k INTEGER DEFAULT '0' NOT NULL,
          PRIMARY KEY (id))`, n)
	}
	if spec(*o).Family == "legacy" {
		return legacyCreateTableSQL(o, n)
	}
	if spec(*o).Family == legacyBulkFamily {
		return legacyBulkCreateTableSQL(n) // workload_legacy_bulk.go
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
	if EmptyTables(*o) {
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
	if spec(o).TablesPerThread {
		// sysbench creates these from one connection, sequentially.
		for _, n := range nums {
			if spec(o).Family != legacyBulkFamily { // the legacy bulk_insert.lua prints nothing
				log.printf("Creating table 'sbtest%d'...", n)
			}
			if _, err := db.ExecContext(ctx, createTableSQL(&o, n)); err != nil {
				return fmt.Errorf("create sbtest%d: %w", n, err)
			}
		}
		return nil
	}
	l := &loader{o: &o, dist: dist, seed: seed, log: log}
	return l.run(ctx, db, threads, nums)
}

// perTable runs fn for every table on threads connections, worker t taking
// tables t, t+threads, ... of nums, as sysbench's prewarm shares tables
// out. The first error cancels the others and is returned.
func perTable(ctx context.Context, db *sql.DB, threads int, nums []int, fn func(ctx context.Context, c *sql.Conn, n int) error) error {
	return onConns(ctx, db, threads, func(ctx context.Context, c *sql.Conn, t int) error {
		for i := t; i < len(nums); i += threads {
			if err := fn(ctx, c, nums[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// onConns runs fn(ctx, c, t) for t = 0..threads-1 at once, each on a
// connection of its own. The first error cancels the others and is
// returned.
func onConns(ctx context.Context, db *sql.DB, threads int, fn func(ctx context.Context, c *sql.Conn, t int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, threads)
	for t := range threads {
		go func() {
			errs <- func() error {
				c, err := db.Conn(ctx)
				if err != nil {
					return err
				}
				defer c.Close()
				return fn(ctx, c, t)
			}()
		}()
	}
	var first error
	for range threads {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	return first
}

// Parallel load. sysbench's prepare gives worker t the whole tables t,
// t+threads, ..., so --tables=1 --threads=8 loads on one connection, and 3
// tables on 2 threads leave one idle for a third of the time. Here the
// tables' rows are cut into units of whole id blocks (loadBlock rows), as
// many per table as it takes for the units to share out evenly over the
// connections, and the workers take units from one queue: the first to
// reach a table creates it, the last to finish one of its units builds its
// secondary index while the others go on loading. Each id block draws its
// rows from its own random stream, so the data of a seed is the same
// whatever the number of threads. Measured on MariaDB 10.11 (2 cores, one
// table of 400k rows): 1 connection 90k-100k rows/s, 2 connections on
// halves of the id range 116k-159k, with the same data and index sizes
// (InnoDB fills the pages of each range's right edge as it does for one).

// loadBlock is the number of ids that share one random stream, and the
// smallest part of a table a unit holds.
const loadBlock = 5000

// loadUnit is ids first..last of table tbl.
type loadUnit struct {
	tbl         *loadTable
	first, last int
}

// loadTable is a table being loaded by one or more workers.
type loadTable struct {
	n       int
	created sync.Once
	err     error // from creating it
	local   bool  // LOAD DATA LOCAL works into it
	left    atomic.Int32
}

type loader struct {
	o    *Options
	dist *Dist
	seed int64
	log  *logger
}

// Every row is loaded with its id, 1..N, auto_inc on or off. sysbench's
// prepare sends auto_inc=on rows without ids and lets AUTO_INCREMENT
// number them: 1..N on a server whose auto_increment_increment and
// auto_increment_offset are 1, the same rows as here. Where they are not,
// its ids step: a Galera node with wsrep_auto_increment_control = ON (the
// default) sets the increment to the cluster's size and overrides a
// session's own SET of it (MariaDB 10.11, Galera 26.4, 3 nodes: after SET
// SESSION auto_increment_increment = 1 the session reads 3), so sysbench
// 1.0.20 loads 2,000 rows as ids 1, 4, ... 5998. Its workloads draw ids
// from 1..table_size: a point select finds a row a third of the time, and
// oltp_write_only's delete/insert pairs delete nothing and insert a new
// row (3,000 events took its table from 2,000 to 2,292 rows; a single
// server keeps 2,000). Loading the ids explicitly gives every topology the
// same rows, so Galera cells run the same statements on the same data as
// single-server cells (topology/equal_test.go). It also lets a table be
// loaded by several connections at once and by LOAD DATA, which reserves
// AUTO_INCREMENT ids in growing blocks and would leave gaps. The table's
// AUTO_INCREMENT continues after N as it would after sysbench's load.

// units cuts the tables into the queue of units for threads workers.
func (l *loader) units(nums []int, threads int) []loadUnit {
	rows := loadRows(l.o)
	blocks := (rows + loadBlock - 1) / loadBlock
	parts := 1
	if blocks > 0 {
		// As many parts per table as make tables×parts a multiple of the
		// threads, within the table's number of blocks.
		parts = min(threads/gcd(len(nums), threads), blocks)
	}
	var out []loadUnit
	for _, n := range nums {
		t := &loadTable{n: n}
		t.left.Store(int32(parts))
		for p := 0; p < parts; p++ {
			b0, b1 := blocks*p/parts, blocks*(p+1)/parts
			out = append(out, loadUnit{tbl: t, first: b0*loadBlock + 1, last: min(b1*loadBlock, rows)})
		}
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// run loads every table on threads connections, each taking the next
// unit from the queue until none is left.
func (l *loader) run(ctx context.Context, db *sql.DB, threads int, nums []int) error {
	units := l.units(nums, threads)
	var next atomic.Int64
	return onConns(ctx, db, threads, func(ctx context.Context, c *sql.Conn, _ int) error {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(units) {
				return nil
			}
			if err := l.load(ctx, c, units[i]); err != nil {
				return err
			}
		}
	})
}

// load fills one unit: creating its table first if no worker has, and
// indexing the table when this was its last unit to finish.
func (l *loader) load(ctx context.Context, c *sql.Conn, u loadUnit) error {
	t, o := u.tbl, l.o
	name := tableName(t.n)
	t.created.Do(func() {
		l.log.printf("Creating table '%s'...", name)
		if _, err := c.ExecContext(ctx, createTableSQL(o, t.n)); err != nil {
			t.err = fmt.Errorf("create %s: %w", name, err)
			return
		}
		if rows := loadRows(o); rows > 0 {
			t.local = canLoadLocal(ctx, c, t.n)
			l.log.printf("Inserting %d records into '%s'", rows, name)
		}
	})
	if t.err != nil {
		return t.err
	}
	if u.last >= u.first {
		load := l.insertRows
		if t.local {
			load = l.loadRowsLocal
		}
		if err := load(ctx, c, u); err != nil {
			return fmt.Errorf("load %s: %w", name, err)
		}
	}
	if t.left.Add(-1) > 0 || !o.CreateSecondary {
		return nil
	}
	if spec(*o).Family == "legacy" {
		l.log.printf("Creating secondary indexes on '%s'...", name)
	} else {
		l.log.printf("Creating a secondary index on '%s'...", name)
	}
	if _, err := c.ExecContext(ctx, fmt.Sprintf("CREATE INDEX k_%d ON sbtest%d(k)", t.n, t.n)); err != nil {
		return fmt.Errorf("create index k_%d: %w", t.n, err)
	}
	return nil
}

// rows generates the unit's rows in id order, handing each to emit (which
// must copy what it keeps) until emit returns false.
func (l *loader) rows(u loadUnit, emit func(id int, k uint32, c, pad []byte) bool) {
	var cv [cLen]byte
	var pv [padLen]byte
	size := uint32(l.o.TableSize)
	var r *Rand
	for id := u.first; id <= u.last; id++ {
		if (id-1)%loadBlock == 0 || r == nil {
			r = NewRand(l.seed, loadStream(u.tbl.n, (id-1)/loadBlock))
		}
		r.Digits(cv[:], 11)
		r.Digits(pv[:], 11)
		if !emit(id, l.dist.Draw(r, 1, size), cv[:], pv[:]) {
			return
		}
	}
}

// loadStream is the random stream of table n's id block b.
func loadStream(n, b int) int { return 1<<62 | n<<31 | b }

// insertRows sends the unit's rows as ~512 KiB multi-row INSERTs, as
// sysbench does, each row with its id (see loader); loadRowsLocal is the
// faster path used when the server accepts it. Statements are generated
// while the previous one runs.
func (l *loader) insertRows(ctx context.Context, c *sql.Conn, u loadUnit) error {
	prefix := "INSERT INTO " + tableName(u.tbl.n) + "(id, k, c, pad) VALUES"
	return sendChunks(ctx, func(send func(string) bool) {
		bb := newBulkBuffer(prefix)
		var row []byte
		l.rows(u, func(id int, k uint32, cv, pv []byte) bool {
			row = append(row[:0], '(')
			row = strconv.AppendInt(row, int64(id), 10)
			row = append(row, ", "...)
			row = strconv.AppendUint(row, uint64(k), 10)
			row = append(row, ", '"...)
			row = append(row, cv...)
			row = append(row, "', '"...)
			row = append(row, pv...)
			row = append(row, "')"...)
			if !bb.fits(len(row)) && !send(bb.take()) {
				return false
			}
			bb.add(row)
			return true
		})
		if bb.rows > 0 {
			send(bb.take())
		}
	}, func(q string) error {
		_, err := c.ExecContext(ctx, q)
		return err
	})
}

// sendChunks runs gen in a goroutine, executing each chunk it sends with
// exec while it generates the next. A failed exec (or ctx ending) stops
// gen and is returned.
func sendChunks[T any](ctx context.Context, gen func(send func(T) bool), exec func(T) error) error {
	chunks := make(chan T, 2)
	genCtx, stopGen := context.WithCancel(ctx)
	defer stopGen()
	go func() {
		defer close(chunks)
		gen(func(b T) bool {
			select {
			case chunks <- b:
				return true
			case <-genCtx.Done():
				return false
			}
		})
	}()
	for q := range chunks {
		if err := exec(q); err != nil {
			stopGen()
			for range chunks {
			}
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
// get the INSERTs.
//
// What bounds prepare is the server: its CPU, not the client's, with the
// rows generated ahead (client 1.4 ms of CPU per 1,000 rows, server 10.7
// ms; sysbench 1.7 and 13.8, bench-vs-sysbench). In a profile of mariadbd
// during the load, LOAD DATA's field reader (READ_INFO::read_field,
// String::append, memmove) is a third of the server's CPU and InnoDB's
// row inserts most of the rest. Measured and rejected (4×100k rows, 2
// connections, rows generated beforehand, medians of 6, rows/s; this
// LOAD DATA path 160k): unique_checks=0 and foreign_key_checks=0 for
// InnoDB's bulk-insert path, one statement or one transaction per table
// (127k, 125k; with the k index built by it 126k, 93k); fixed-width rows
// or ESCAPED BY '' (162k-170k); 4 MiB statements (175k); server-side
// prepared multi-row INSERTs of 500-2000 rows (108k-112k). For scale,
// INSERT ... SELECT of the same rows inside the server, with no client,
// no parsing and no secondary index, made 220k-300k rows/s.

// localInfileSeq names the driver's reader handlers, which are global.
var localInfileSeq atomic.Int64

// canLoadLocal tells whether the server takes LOAD DATA LOCAL INFILE
// into table n through c, tried by loading nothing into the (empty) table.
func canLoadLocal(ctx context.Context, c *sql.Conn, n int) bool {
	name := fmt.Sprintf("benchmatrix-probe-%d", localInfileSeq.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return strings.NewReader("") })
	defer mysql.DeregisterReaderHandler(name)
	_, err := c.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+tableName(n)+" (k)")
	return err == nil
}

// loadRowsLocal sends the unit's rows as LOAD DATA LOCAL INFILE
// statements of at most bulkPacketSize bytes of CSV each, with explicit
// ids (see loader).
func (l *loader) loadRowsLocal(ctx context.Context, c *sql.Conn, u loadUnit) error {
	name := fmt.Sprintf("benchmatrix-load-%d", localInfileSeq.Add(1))
	stmt := "LOAD DATA LOCAL INFILE 'Reader::" + name + "' INTO TABLE " + tableName(u.tbl.n) + " FIELDS TERMINATED BY ',' (id, k, c, pad)"
	var cur []byte // the chunk the running statement reads
	mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(cur) })
	defer mysql.DeregisterReaderHandler(name)
	return sendChunks(ctx, func(send func([]byte) bool) {
		buf := make([]byte, 0, bulkPacketSize)
		l.rows(u, func(id int, k uint32, cv, pv []byte) bool {
			if len(buf)+cLen+padLen+32 > bulkPacketSize {
				if !send(buf) {
					return false
				}
				buf = make([]byte, 0, bulkPacketSize)
			}
			buf = strconv.AppendInt(buf, int64(id), 10)
			buf = append(buf, ',')
			buf = strconv.AppendUint(buf, uint64(k), 10)
			buf = append(buf, ',')
			buf = append(buf, cv...)
			buf = append(buf, ',')
			buf = append(buf, pv...)
			buf = append(buf, '\n')
			return true
		})
		if len(buf) > 0 {
			send(buf)
		}
	}, func(b []byte) error {
		cur = b
		_, err := c.ExecContext(ctx, stmt)
		return err
	})
}
