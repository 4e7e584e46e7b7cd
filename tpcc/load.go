package tpcc

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
	"time"

	"benchmatrix/sqlconn"

	"github.com/go-sql-driver/mysql"
)

// bulkLimit is the size at which a multi-row INSERT is sent: sysbench's
// bulk insert buffer (BULK_PACKET_SIZE, 512 KiB).
const bulkLimit = 512 * 1024

// PrepareStats is what a prepare did: rows per table kind and how long
// each phase took.
type PrepareStats struct {
	Rows      map[string]int64 `json:"rows"`
	TotalRows int64            `json:"total_rows"`
	Create    time.Duration    `json:"create"`
	Load      time.Duration    `json:"load"`
	Index     time.Duration    `json:"index"` // secondary indexes and foreign keys
	Elapsed   time.Duration    `json:"elapsed"`
}

// RowsPerSecond is the load rate over the whole prepare.
func (s *PrepareStats) RowsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.TotalRows) / s.Elapsed.Seconds()
}

// ExistingTablesError is a prepare that found tables of the workload
// already there: prepare never reuses or changes tables it did not create.
type ExistingTablesError struct {
	DB     string
	Tables []string
}

func (e *ExistingTablesError) Error() string {
	return fmt.Sprintf("tables already exist in database %q: %s (run cleanup first; prepare does not change tables it did not create)",
		e.DB, strings.Join(e.Tables, ", "))
}

// sessionInit is what sysbench-tpcc's db_connection_init sends on each
// connection: the isolation level under the variable's name the server
// reports (tx_isolation or transaction_isolation), foreign key checks
// off, autocommit off.
func sessionInit(ctx context.Context, c *sql.Conn, o *Options) error {
	var name, value string
	if err := c.QueryRowContext(ctx, isolationQuery).Scan(&name, &value); err != nil {
		return fmt.Errorf("%s: %w", isolationQuery, err)
	}
	qs, err := sessionStatements(name, o)
	if err != nil {
		return err
	}
	for _, q := range qs {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// isolationQuery asks the server the name of its isolation variable.
const isolationQuery = "SHOW VARIABLES LIKE 't%_isolation'"

// sessionStatements are the statements of sessionInit once the server
// has named its isolation variable.
func sessionStatements(name string, o *Options) ([]string, error) {
	if !identifier(name) {
		return nil, fmt.Errorf("the server names its isolation variable %q", name)
	}
	return []string{
		fmt.Sprintf("SET SESSION %s='%s'", name, isolationLevels[o.TrxLevel]),
		"SET FOREIGN_KEY_CHECKS=0",
		"SET autocommit=0",
	}, nil
}

// existing lists the workload's tables already in the database.
func existing(ctx context.Context, db *sql.DB, o *Options) ([]string, error) {
	want := map[string]bool{}
	for _, n := range TableNames(*o) {
		want[n] = true
	}
	rows, err := db.QueryContext(ctx, "SHOW TABLES")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		if want[strings.ToLower(n)] {
			found = append(found, n)
		}
	}
	return found, rows.Err()
}

// loadUnit is one piece of the data, loaded on one connection: sysbench-tpcc
// loads a whole warehouse per thread; here a warehouse is 31 pieces (its
// row and districts, then per district its customers and history, its
// orders, new orders and order lines, and a tenth of its stock), so that
// every connection has work whatever the scale, and the data of a seed is
// the same whatever the thread count (each piece draws from its own
// stream).
type loadUnit struct {
	set, w int
	kind   string // "item", "warehouse", "customer", "orders", "stock"
	part   int    // district, or tenth of stock / item
	stream int
}

func units(o *Options) []loadUnit {
	var us []loadUnit
	stream := 0
	add := func(u loadUnit) {
		stream++
		u.stream = stream
		us = append(us, u)
	}
	for set := 1; set <= o.Tables; set++ {
		for p := range 10 {
			add(loadUnit{set: set, kind: "item", part: p})
		}
	}
	// Warehouse-major, so that the first warehouses complete first.
	for w := 1; w <= o.Scale; w++ {
		for set := 1; set <= o.Tables; set++ {
			add(loadUnit{set: set, w: w, kind: "warehouse"})
			for d := 1; d <= DistPerWare; d++ {
				add(loadUnit{set: set, w: w, kind: "orders", part: d})
				add(loadUnit{set: set, w: w, kind: "customer", part: d})
			}
			for p := range 10 {
				add(loadUnit{set: set, w: w, kind: "stock", part: p})
			}
		}
	}
	return us
}

// Prepare creates o's tables as sysbench-tpcc does (the same DDL, indexes
// and foreign keys) and loads the data of the specification's sizes as
// sysbench-tpcc generates it, on o.Threads connections in parallel
// (workers take pieces of warehouses, not whole warehouses). It refuses
// tables that already exist. log gets sysbench-tpcc's progress lines.
func Prepare(ctx context.Context, cfg *mysql.Config, o Options, log io.Writer) (*PrepareStats, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	var logMu sync.Mutex
	printf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(log, format, args...)
	}
	db, err := sqlconn.OpenDB(cfg, o.Threads)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	found, err := existing(ctx, db, &o)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	if len(found) > 0 {
		return nil, &ExistingTablesError{DB: cfg.DBName, Tables: found}
	}
	start := time.Now()
	seed := o.RandSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	// The load's NURand constant for last names (clause 2.1.6).
	loadC := newNuConst(newRng(seed, 0), -1)

	// The tables: one connection per table set. Their secondary indexes
	// and foreign keys come after the rows (below): a sorted index build
	// is cheaper than keeping the indexes up to date row by row, and the
	// tables end up as sysbench-tpcc's (the same statements, later).
	sets := make(chan int, o.Tables)
	for n := 1; n <= o.Tables; n++ {
		sets <- n
	}
	close(sets)
	err = onConns(ctx, db, &o, min(o.Threads, o.Tables), func(ctx context.Context, c *sql.Conn) error {
		for n := range sets {
			printf("Creating tables: %d\n\n", n)
			for _, q := range createTables(&o, n) {
				if _, err := c.ExecContext(ctx, q); err != nil {
					return fmt.Errorf("table set %d: %s: %w", n, firstLine(q), err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	created := time.Now()

	// LOAD DATA LOCAL INFILE when the server takes it, else INSERTs.
	local := false
	if !o.InsertLoad {
		if err := onConns(ctx, db, &o, 1, func(ctx context.Context, c *sql.Conn) error {
			local = canLoadLocal(ctx, c, "warehouse1")
			return nil
		}); err != nil {
			return nil, err
		}
	}
	work := make(chan loadUnit)
	var total atomic.Int64
	rows := make(map[string]int64)
	var rowsMu sync.Mutex
	go func() {
		defer close(work)
		for _, u := range units(&o) {
			select {
			case work <- u:
			case <-ctx.Done():
				return
			}
		}
	}()
	err = onConns(ctx, db, &o, o.Threads, func(ctx context.Context, c *sql.Conn) error {
		if _, err := c.ExecContext(ctx, "SET SESSION autocommit=1"); err != nil {
			return err
		}
		l := &loader{c: c, o: &o, lc: &loadC, local: local, now: "NOW()"}
		if local {
			l.now = "'" + start.Format("2006-01-02 15:04:05") + "'"
		}
		for u := range work {
			if u.kind == "warehouse" {
				printf("loading tables: %d for warehouse: %d\n\n", u.set, u.w)
			}
			l.g = newRng(seed, u.stream)
			l.rows = map[string]int64{}
			if err := l.load(ctx, u); err != nil {
				return err
			}
			rowsMu.Lock()
			for k, v := range l.rows {
				rows[k] += v
				total.Add(v)
			}
			rowsMu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	loaded := time.Now()
	if err := indexes(ctx, db, &o, printf); err != nil {
		return nil, err
	}
	end := time.Now()
	return &PrepareStats{Rows: rows, TotalRows: total.Load(), Create: created.Sub(start), Load: loaded.Sub(created),
		Index: end.Sub(loaded), Elapsed: end.Sub(start)}, nil
}

// indexes adds sysbench-tpcc's secondary indexes (in parallel: each
// builds on its own table) and then its foreign keys (one table set after
// the other; with foreign key checks off they are not validated, as in
// sysbench-tpcc, whose load runs with the checks off too).
func indexes(ctx context.Context, db *sql.DB, o *Options, printf func(string, ...any)) error {
	type job struct {
		set int
		sql string
	}
	jobs := make(chan job)
	go func() {
		defer close(jobs)
		for n := 1; n <= o.Tables; n++ {
			printf("Adding indexes %d ... \n\n", n)
			for _, q := range secondaryIndexes(n) {
				select {
				case jobs <- job{n, q}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	var mu sync.Mutex
	busy := map[string]bool{} // a table being altered
	err := onConns(ctx, db, o, o.Threads, func(ctx context.Context, c *sql.Conn) error {
		for j := range jobs {
			table := strings.Fields(j.sql)[4] // CREATE INDEX name ON table
			for {
				mu.Lock()
				if !busy[table] {
					busy[table] = true
					mu.Unlock()
					break
				}
				mu.Unlock()
				if !sleepCtx(ctx, 50*time.Millisecond) {
					return ctx.Err()
				}
			}
			_, err := c.ExecContext(ctx, j.sql)
			mu.Lock()
			delete(busy, table)
			mu.Unlock()
			if err != nil {
				return fmt.Errorf("table set %d: %s: %w", j.set, j.sql, err)
			}
		}
		return nil
	})
	if err != nil || !o.UseFK {
		return err
	}
	return onConns(ctx, db, o, 1, func(ctx context.Context, c *sql.Conn) error {
		for n := 1; n <= o.Tables; n++ {
			printf("Adding FK %d ... \n\n", n)
			for _, q := range foreignKeys(n) {
				if _, err := c.ExecContext(ctx, q); err != nil {
					return fmt.Errorf("table set %d: %s: %w", n, q, err)
				}
			}
		}
		return nil
	})
}

// onConns runs fn on n connections at once, each set up as sysbench-tpcc
// sets up its connections; the first error cancels the others.
func onConns(parent context.Context, db *sql.DB, o *Options, n int, fn func(ctx context.Context, c *sql.Conn) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := func() error {
				c, err := db.Conn(ctx)
				if err != nil {
					return err
				}
				defer c.Close()
				if err := sessionInit(ctx, c, o); err != nil {
					return err
				}
				return fn(ctx, c)
			}()
			if err != nil {
				errs[i] = err
				cancel()
			}
		}()
	}
	wg.Wait()
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled)) {
			first = err
		}
	}
	if first == nil {
		first = parent.Err()
	}
	return first
}

func firstLine(q string) string {
	q, _, _ = strings.Cut(q, "\n")
	return q
}

// loader builds the multi-row INSERTs of one connection, or, with local,
// the same rows for LOAD DATA LOCAL INFILE (each row "(...)" on a line of
// its own, read with FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\”
// LINES STARTING BY '(' TERMINATED BY ')\n': the server parses it faster
// than the INSERT's VALUES).
type loader struct {
	c     *sql.Conn
	o     *Options
	g     *rng
	lc    *nuConst
	local bool
	now   string // NOW() in an INSERT; the load's time as a literal in LOAD DATA
	rows  map[string]int64
	buf   []byte
	head  int    // length of the INSERT ... VALUES prefix in buf
	n     int    // rows in buf
	row   []byte // the row being built
	kind  string
	table string
	cols  string
}

// begin starts a multi-row INSERT into table (kind, set).
func (l *loader) begin(kind string, set int, cols string) {
	l.kind = kind
	l.table = kind + strconv.Itoa(set)
	l.cols = cols
	l.buf = l.buf[:0]
	if !l.local {
		l.buf = append(l.buf, "INSERT INTO "...)
		l.buf = append(l.buf, l.table...)
		l.buf = append(l.buf, " ("...)
		l.buf = append(l.buf, cols...)
		l.buf = append(l.buf, ") values"...)
	}
	l.head = len(l.buf)
	l.n = 0
}

// add appends the row in l.row, sending the INSERT first when the row
// would not fit (sysbench's db_bulk_insert_next).
func (l *loader) add(ctx context.Context) error {
	if l.n > 0 && len(l.buf)+1+len(l.row)+1 > bulkLimit {
		if err := l.flush(ctx); err != nil {
			return err
		}
	}
	switch {
	case l.local:
		l.row = append(l.row, '\n')
	case l.n > 0:
		l.buf = append(l.buf, ',')
	}
	l.buf = append(l.buf, l.row...)
	l.n++
	return nil
}

var localSeq atomic.Int64

func (l *loader) flush(ctx context.Context) error {
	if l.n == 0 {
		return nil
	}
	var err error
	if l.local {
		name := fmt.Sprintf("benchmatrix-tpcc-%d", localSeq.Add(1))
		data := l.buf
		mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(data) })
		_, err = l.c.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+l.table+
			" FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\\'' LINES STARTING BY '(' TERMINATED BY ')\\n' ("+l.cols+")")
		mysql.DeregisterReaderHandler(name)
	} else {
		_, err = l.c.ExecContext(ctx, string(l.buf))
	}
	if err != nil {
		return fmt.Errorf("load %s: %w", l.kind, err)
	}
	l.rows[l.kind] += int64(l.n)
	l.buf = l.buf[:l.head]
	l.n = 0
	return nil
}

// canLoadLocal tells whether the server and the connection take LOAD DATA
// LOCAL INFILE (local_infile may be off).
func canLoadLocal(ctx context.Context, c *sql.Conn, table string) bool {
	name := fmt.Sprintf("benchmatrix-tpcc-probe-%d", localSeq.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return bytes.NewReader(nil) })
	defer mysql.DeregisterReaderHandler(name)
	_, err := c.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+table)
	return err == nil
}

func (l *loader) load(ctx context.Context, u loadUnit) error {
	switch u.kind {
	case "item":
		return l.items(ctx, u)
	case "warehouse":
		return l.warehouse(ctx, u)
	case "customer":
		return l.customers(ctx, u)
	case "orders":
		return l.orders(ctx, u)
	case "stock":
		return l.stock(ctx, u)
	}
	return fmt.Errorf("unknown load unit %q", u.kind)
}

// r starts a row.
func (l *loader) r() { l.row = append(l.row[:0], '(') }

func (l *loader) int(v int) { l.row = strconv.AppendInt(l.row, int64(v), 10) }
func (l *loader) sep()      { l.row = append(l.row, ',') }

// ints appends vs, separated by commas.
func (l *loader) ints(vs ...int) {
	for i, v := range vs {
		if i > 0 {
			l.sep()
		}
		l.int(v)
	}
}

func (l *loader) raw(s string) {
	l.row = append(l.row, s...)
}

// quoted appends 'template' with its @ and # drawn.
func (l *loader) quoted(template string) {
	l.row = append(l.row, '\'')
	l.row = l.g.str(l.row, template)
	l.row = append(l.row, '\'')
}

// rep appends a one-letter string of n letters, quoted.
func (l *loader) rep(n int) {
	l.row = append(l.row, '\'')
	l.row = l.g.repeated(l.row, n)
	l.row = append(l.row, '\'')
}

// fixed appends f with six decimals (Lua's %f).
func (l *loader) fixed(f float64) { l.row = strconv.AppendFloat(l.row, f, 'f', 6, 64) }

func (l *loader) end() { l.row = append(l.row, ')') }

// items: i_im_id 1..10000, i_price 1..101, i_name and i_data as
// sysbench-tpcc makes them ("item-<im_id>-<price>-<5 letters>", cut to
// 24; "data-<name>-<5 letters>", cut to 50).
func (l *loader) items(ctx context.Context, u loadUnit) error {
	l.begin("item", u.set, "i_id, i_im_id, i_name, i_price, i_data")
	per := MaxItems / 10
	for id := u.part*per + 1; id <= (u.part+1)*per; id++ {
		im := l.g.uniform(1, 10000)
		price := l.g.float()*100 + 1
		name := "item-" + strconv.Itoa(im) + "-" + strconv.FormatFloat(price, 'f', 6, 64) + "-" + string(l.g.letters(nil, 5))
		data := "data-" + name + "-" + string(l.g.letters(nil, 5))
		l.r()
		l.ints(id, im)
		l.raw(",'")
		l.raw(name[:min(len(name), 24)])
		l.raw("',")
		l.fixed(price)
		l.raw(",'")
		l.raw(data[:min(len(data), 50)])
		l.raw("')")
		if err := l.add(ctx); err != nil {
			return err
		}
	}
	return l.flush(ctx)
}

// address appends name, street_1, street_2, city, state and zip.
func (l *loader) address() {
	l.quoted("name-@@@@@")
	l.sep()
	l.street()
}

// street appends street_1, street_2, city, state and zip.
func (l *loader) street() {
	l.quoted("street1-@@@@@@@@@@")
	l.sep()
	l.quoted("street2-@@@@@@@@@@")
	l.sep()
	l.quoted("city-@@@@@@@@@@")
	l.sep()
	l.quoted("@@")
	l.sep()
	l.quoted("zip-#####")
	l.sep()
}

// warehouse: the warehouse row (w_ytd 300,000) and its ten districts
// (d_ytd 30,000, d_next_o_id 3001).
func (l *loader) warehouse(ctx context.Context, u loadUnit) error {
	l.begin("warehouse", u.set, "w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd")
	l.r()
	l.int(u.w)
	l.sep()
	l.address()
	l.fixed(l.g.float() * 0.2)
	l.raw(",300000)")
	if err := l.add(ctx); err != nil {
		return err
	}
	if err := l.flush(ctx); err != nil {
		return err
	}
	l.begin("district", u.set, "d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id")
	for d := 1; d <= DistPerWare; d++ {
		l.r()
		l.ints(d, u.w)
		l.sep()
		l.address()
		l.fixed(l.g.float() * 0.2)
		l.raw(",30000,3001)")
		if err := l.add(ctx); err != nil {
			return err
		}
	}
	return l.flush(ctx)
}

// customers: 3,000 customers of one district (the first 1,000 with each
// last name once, the others NURand(255, 0, 999); 10% bad credit) and
// their history rows.
func (l *loader) customers(ctx context.Context, u loadUnit) error {
	l.begin("customer", u.set, "c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, "+
		"c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data")
	for c := 1; c <= CustPerDist; c++ {
		num := c - 1
		if c > lastNameSpan {
			num = l.g.nurand(l.lc, 255, 0, lastNameSpan-1)
		}
		l.r()
		l.ints(c, u.part, u.w)
		l.raw(",'first-")
		l.row = l.g.letters(l.row, l.g.uniform(2, 10))
		l.raw("','OE','")
		l.raw(lastName(num))
		l.raw("',")
		l.street()
		l.quoted("################")
		l.raw(",")
		l.raw(l.now)
		l.raw(",")
		if l.g.uniform(1, 100) > 10 {
			l.raw("'GC'")
		} else {
			l.raw("'BC'")
		}
		l.raw(",50000,")
		l.fixed(l.g.float() * 0.5)
		l.raw(",-10,10,1,0,")
		l.rep(l.g.uniform(300, 500))
		l.end()
		if err := l.add(ctx); err != nil {
			return err
		}
	}
	if err := l.flush(ctx); err != nil {
		return err
	}
	l.begin("history", u.set, "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data")
	for c := 1; c <= CustPerDist; c++ {
		l.r()
		l.ints(c, u.part, u.w, u.part, u.w)
		l.raw(",")
		l.raw(l.now)
		l.raw(",10,")
		l.rep(l.g.uniform(12, 24))
		l.end()
		if err := l.add(ctx); err != nil {
			return err
		}
	}
	return l.flush(ctx)
}

// orders: 3,000 orders of one district, their customers a random
// permutation of 1..3,000 (clause 4.3.3.1), 5..15 lines each; orders
// 2101..3000 undelivered (no carrier, in new_orders, lines without a
// delivery date and with an amount).
func (l *loader) orders(ctx context.Context, u loadUnit) error {
	perm := make([]int, CustPerDist)
	for i := range perm {
		perm[i] = i + 1
	}
	for i := range perm {
		j := l.g.uniform(i, CustPerDist-1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	counts := make([]int, CustPerDist+1)
	l.begin("orders", u.set, "o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local")
	for o := 1; o <= CustPerDist; o++ {
		counts[o] = l.g.uniform(minOrderLines, maxOrderLines)
		l.r()
		l.ints(o, u.part, u.w, perm[o-1])
		l.raw(",")
		l.raw(l.now)
		l.raw(",")
		if o < firstNewOrder {
			l.int(l.g.uniform(1, 10))
		} else {
			l.raw("NULL")
		}
		l.sep()
		l.int(counts[o])
		l.raw(",1)")
		if err := l.add(ctx); err != nil {
			return err
		}
	}
	if err := l.flush(ctx); err != nil {
		return err
	}
	l.begin("new_orders", u.set, "no_o_id, no_d_id, no_w_id")
	for o := firstNewOrder; o <= CustPerDist; o++ {
		l.r()
		l.ints(o, u.part, u.w)
		l.end()
		if err := l.add(ctx); err != nil {
			return err
		}
	}
	if err := l.flush(ctx); err != nil {
		return err
	}
	l.begin("order_line", u.set, "ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info")
	for o := 1; o <= CustPerDist; o++ {
		for n := 1; n <= counts[o]; n++ {
			l.r()
			l.ints(o, u.part, u.w, n, l.g.uniform(1, MaxItems), u.w)
			if o < firstNewOrder {
				l.raw(",")
				l.raw(l.now)
				l.raw(",5,0,")
			} else {
				l.raw(",NULL,5,")
				l.fixed(l.g.float() * 9999.99)
				l.sep()
			}
			l.rep(24)
			l.end()
			if err := l.add(ctx); err != nil {
				return err
			}
		}
	}
	return l.flush(ctx)
}

// stock: a tenth of a warehouse's 100,000 stock rows (quantity 10..100).
func (l *loader) stock(ctx context.Context, u loadUnit) error {
	l.begin("stock", u.set, "s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, "+
		" s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data")
	per := MaxItems / 10
	for s := u.part*per + 1; s <= (u.part+1)*per; s++ {
		l.r()
		l.ints(s, u.w, l.g.uniform(10, 100))
		for range 10 {
			l.sep()
			l.rep(24)
		}
		l.raw(",0,0,0,")
		l.rep(l.g.uniform(26, 50))
		l.end()
		if err := l.add(ctx); err != nil {
			return err
		}
	}
	return l.flush(ctx)
}

// Cleanup drops o's tables as sysbench-tpcc's cleanup does (DROP TABLE IF
// EXISTS, children first), printing its lines.
func Cleanup(ctx context.Context, cfg *mysql.Config, o Options, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	db, err := sqlconn.OpenDB(cfg, 1)
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := sessionInit(ctx, c, &o); err != nil {
		return err
	}
	for n := 1; n <= o.Tables; n++ {
		fmt.Fprintf(log, "Dropping tables '%d'...\n", n)
		for _, q := range dropTables(n) {
			if _, err := c.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
	}
	return nil
}
