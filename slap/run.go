package slap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Session is one connection as mariadb-slap uses it.
type Session interface {
	// Run sends one statement and reads every result it returns.
	Run(ctx context.Context, sql string) error
	// Column runs a query and returns the first column of its rows.
	Column(ctx context.Context, sql string) ([]string, error)
	// Use makes db the default schema (mysql_select_db).
	Use(ctx context.Context, db string) error
	Close() error
}

// Dialer opens sessions: the main one (no default schema) and the
// clients' (in the test schema).
type Dialer interface {
	Main(ctx context.Context) (Session, error)
	Client(ctx context.Context, schema string) (Session, error)
}

// Conclusion is one report block (one engine and one concurrency,
// summarised over the iterations), mariadb-slap's "conclusions".
type Conclusion struct {
	Engine     string          `json:"engine,omitempty"`
	LoadType   string          `json:"load_type"`
	Avg        time.Duration   `json:"avg"`
	Min        time.Duration   `json:"min"`
	Max        time.Duration   `json:"max"`
	Users      int             `json:"clients"`
	AvgRows    uint64          `json:"queries_per_client"`
	Iterations []time.Duration `json:"iterations"`
}

// Bench runs one command line.
type Bench struct {
	Config Config
	Dial   Dialer
	Out    io.Writer // the report, --verbose lines and --only-print's SQL
	Err    io.Writer
	// CSV receives the --csv lines (nil: Out).
	CSV io.Writer
	// Prog names the program in its messages (default "benchmatrix slap").
	Prog string
	// OnQuery, if set, hears every statement a client finished, with its
	// latency (the runner's statistics). It is called from the clients'
	// goroutines; client numbers run from 0.
	OnQuery func(client int, kind Kind, latency time.Duration)
	// OnLoad, if set, hears the start (true) and end (false) of each timed
	// load phase (the part mariadb-slap's seconds measure).
	OnLoad func(start bool)

	mu     sync.Mutex // the report writer, and random() for key queries
	rand   *glibcRandom
	script *Script
	keys   []string
	// madeSchema: this run created --create-schema (and drops it at the
	// end, unless --no-drop), so an interrupted run drops it too.
	madeSchema bool
}

// FatalError is a failure after which mariadb-slap exits: its message is
// mariadb-slap's, and Code its exit status.
type FatalError struct {
	Msg  string
	Code int
}

func (e *FatalError) Error() string { return e.Msg }

func fatal(code int, format string, a ...any) error {
	for i, x := range a {
		if e, ok := x.(error); ok {
			a[i] = errText(e)
		}
	}
	return &FatalError{Msg: fmt.Sprintf(format, a...), Code: code}
}

// onlyPrintKey is the key mariadb-slap uses when it does not read keys
// from the table (--only-print, blackhole).
const onlyPrintKey = "796c4422-1d94-102a-9d6d-00e0812d"

func (b *Bench) verbose(level int, format string, a ...any) {
	if b.Config.Verbose >= level {
		b.printf(format, a...)
	}
}

func (b *Bench) printf(format string, a ...any) {
	b.mu.Lock()
	fmt.Fprintf(b.Out, format, a...)
	b.mu.Unlock()
}

// Prepare generates the statements (as get_options does). Run calls it if
// it was not called.
func (b *Bench) Prepare() error {
	if b.script != nil {
		return nil
	}
	if b.rand == nil {
		b.rand = newGlibcRandom(1)
	}
	c := &b.Config
	if c.AutoGenerate {
		b.verbose(2, "Building Create Statements for Auto\n")
	}
	s, err := c.Build(b.rand)
	if err != nil {
		return fatal(1, "%v", err)
	}
	if c.AutoGenerate {
		b.verbose(2, "Building Query Statements for Auto\n")
		switch c.loadKind() {
		case LoadRead:
			b.verbose(2, "Generating SELECT Statements for Auto\n")
		case LoadKey:
			b.verbose(2, "Generating SELECT for keys Statements for Auto\n")
		case LoadWrite:
			b.verbose(2, "Generating INSERT Statements for Auto\n")
		}
	}
	b.verbose(2, "Parsing engines to use.\n")
	b.script = s
	return nil
}

// Script is the generated statements (after Prepare).
func (b *Bench) Script() *Script { return b.script }

// Run runs the command line: for each engine, each concurrency, each
// iteration; it prints the report and returns the conclusions.
func (b *Bench) Run(ctx context.Context) ([]Conclusion, error) {
	if err := b.Prepare(); err != nil {
		return nil, err
	}
	c := &b.Config
	var main Session
	if c.OnlyPrint {
		main = printSession{b}
	} else {
		m, err := b.Dial.Main(ctx)
		if err != nil {
			return nil, fatal(1, "Error when connecting to server: %v", err)
		}
		main = m
	}
	defer main.Close()
	defer b.dropInterrupted(ctx)
	engines := make([]*Engine, 0, len(c.Engines))
	for i := range c.Engines {
		engines = append(engines, &c.Engines[i])
	}
	if len(engines) == 0 {
		engines = append(engines, nil)
	}
	var out []Conclusion
	for _, eng := range engines {
		b.verbose(2, "Starting Concurrency Test\n")
		if len(c.Concurrency) > 0 && c.Concurrency[0] != 0 {
			for _, cur := range c.Concurrency {
				if cur <= 0 {
					break // the list ends at a 0, as mariadb-slap's does
				}
				con, err := b.concurrencyLoop(ctx, main, cur, eng)
				if err != nil {
					return out, err
				}
				out = append(out, con)
			}
		} else {
			// --concurrency=0: 1, 2, 3, ... clients until interrupted.
			for cur := 1; ctx.Err() == nil; cur++ {
				con, err := b.concurrencyLoop(ctx, main, cur, eng)
				if err != nil {
					return out, err
				}
				out = append(out, con)
			}
		}
		if !c.preserve() {
			if err := b.dropSchema(ctx, main); err != nil {
				return out, err
			}
		}
	}
	return out, ctx.Err()
}

// clientLimit is how many queries each client runs (0: the list once).
func (b *Bench) clientLimit(current int) uint64 {
	c := &b.Config
	switch {
	case c.ExecuteNumber > 0:
		return c.ExecuteNumber
	case c.NumberOfQueries > 0:
		return c.NumberOfQueries / uint64(current)
	}
	return b.script.ActualQueries
}

func (b *Bench) concurrencyLoop(ctx context.Context, main Session, current int, eng *Engine) (Conclusion, error) {
	c := &b.Config
	limit := b.clientLimit(current)
	con := Conclusion{LoadType: c.LoadType, Users: current, AvgRows: limit}
	if eng != nil {
		con.Engine = eng.Name
	}
	for it := uint64(0); it < c.Iterations; it++ {
		if err := ctx.Err(); err != nil {
			return con, err
		}
		if !c.preserve() {
			if err := b.dropSchema(ctx, main); err != nil {
				return con, err
			}
		}
		if len(b.script.Create) > 0 {
			b.madeSchema = true
			if err := b.createSchema(ctx, main, eng); err != nil {
				return con, err
			}
		}
		b.verbose(2, "Generating primary key list\n")
		b.keys = nil
		if c.AddAutoIncrement || c.GUIDPrimary {
			if c.OnlyPrint || (eng != nil && strings.Contains(eng.Name, "blackhole")) {
				b.keys = []string{onlyPrintKey}
			} else {
				b.trace("SELECT id from t1")
				keys, err := main.Column(ctx, "SELECT id from t1")
				if err != nil {
					return con, fatal(1, "Cannot select GUID primary keys. (%v)", err)
				}
				b.keys = keys
			}
		}
		if c.Commit > 0 {
			if err := b.run(ctx, main, "SET AUTOCOMMIT=0"); err != nil {
				return con, fatal(1, "Cannot run query SET AUTOCOMMIT=0 ERROR : %v", err)
			}
		}
		if c.PreSystem != "" {
			if rc := system(c.PreSystem); rc != 0 {
				fmt.Fprintf(b.Err, "Warning: Execution of pre_system option returned %d.\n", rc)
			}
		}
		if err := b.runStatements(ctx, main, b.script.Pre); err != nil {
			return con, err
		}
		d, err := b.runScheduler(ctx, current, limit)
		if err != nil {
			return con, err
		}
		con.Iterations = append(con.Iterations, d)
		if err := b.runStatements(ctx, main, b.script.Post); err != nil {
			return con, err
		}
		if c.PostSystem != "" {
			if rc := system(c.PostSystem); rc != 0 {
				fmt.Fprintf(b.Err, "Warning: Execution of post_system option returned %d.\n", rc)
			}
		}
	}
	b.verbose(2, "Generating stats\n")
	con.summarise()
	if !c.Silent && !c.OnlyPrint && c.CSV == "" {
		b.printf("%s", con.Report())
	}
	if c.CSV != "" {
		w := b.CSV
		if w == nil {
			w = b.Out
		}
		b.mu.Lock()
		_, err := io.WriteString(w, con.CSVLine())
		b.mu.Unlock()
		if err != nil {
			return con, fatal(1, "write csv: %v", err)
		}
	}
	return con, nil
}

func (con *Conclusion) summarise() {
	if len(con.Iterations) == 0 {
		return
	}
	var sum time.Duration
	con.Min, con.Max = con.Iterations[0], con.Iterations[0]
	for _, d := range con.Iterations {
		sum += d
		con.Min = min(con.Min, d)
		con.Max = max(con.Max, d)
	}
	con.Avg = sum / time.Duration(len(con.Iterations))
}

// trace is run_query's --verbose --verbose --verbose echo.
func (b *Bench) trace(sql string) {
	if !b.Config.OnlyPrint {
		b.verbose(3, "%s;\n", sql)
	}
}

func (b *Bench) run(ctx context.Context, s Session, sql string) error {
	b.trace(sql)
	return s.Run(ctx, sql)
}

// dropInterrupted drops the schema an interrupted run created, as the
// run would have at its end (mariadb-slap, killed by a Ctrl-C, leaves it:
// benchmatrix stops gracefully and leaves nothing it made). The main
// session ends with ctx, so this opens another, for a bounded time.
func (b *Bench) dropInterrupted(ctx context.Context) {
	if ctx.Err() == nil || !b.madeSchema || b.Config.preserve() || b.Config.OnlyPrint {
		return
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropTimeout)
	defer cancel()
	db := b.Config.CreateSchema
	m, err := b.Dial.Main(dctx)
	if err == nil {
		defer m.Close()
		err = b.dropSchema(dctx, m)
	}
	if err != nil {
		fmt.Fprintf(b.Err, "%s: interrupted; could not drop schema '%s' it created: %v\n", b.prog(), db, err)
		return
	}
	b.madeSchema = false
	fmt.Fprintf(b.Err, "%s: interrupted; dropped schema '%s' it created\n", b.prog(), db)
}

// dropTimeout bounds dropInterrupted.
const dropTimeout = 30 * time.Second

func (b *Bench) dropSchema(ctx context.Context, main Session) error {
	db := b.Config.CreateSchema
	if err := b.run(ctx, main, "DROP SCHEMA IF EXISTS `"+db+"`"); err != nil {
		return fatal(1, "Cannot drop database '%s' ERROR : %v", db, err)
	}
	return nil
}

// createSchema is create_schema: the schema, then the create statements;
// generated data is inserted until --auto-generate-sql-write-number
// statements (the CREATE TABLE counted) have run, cycling through the
// unique inserts.
func (b *Bench) createSchema(ctx context.Context, main Session, eng *Engine) error {
	c := &b.Config
	db := c.CreateSchema
	q := "CREATE SCHEMA `" + db + "`"
	b.verbose(2, "Loading Pre-data\n")
	if err := b.run(ctx, main, q); err != nil {
		return fatal(1, "Cannot create schema %s : %v", db, err)
	}
	if !c.OnlyPrint {
		b.verbose(3, "%s;\n", q)
	}
	if err := main.Use(ctx, db); err != nil {
		return fatal(1, "Cannot select schema '%s': %v", db, err)
	}
	stmts := b.script.Create
	count := uint64(0)
	from := 0
	for {
		for _, st := range stmts[from:] {
			if c.AutoGenerate && c.WriteNumber == count {
				break
			}
			sql := st.SQL
			if eng != nil && st.Kind == KindCreate {
				sql += " Engine = " + eng.Name
				if eng.Option != "" {
					sql += " " + eng.Option
				}
			}
			if err := b.run(ctx, main, sql); err != nil {
				return fatal(1, "Cannot run query %s ERROR : %v", st.SQL, err)
			}
			count++
		}
		if !(c.AutoGenerate && c.WriteNumber > count) || len(stmts) < 2 {
			return nil
		}
		from = 1 // do not create the table twice
	}
}

func (b *Bench) runStatements(ctx context.Context, s Session, stmts []Stmt) error {
	for _, st := range stmts {
		if err := b.run(ctx, s, st.SQL); err != nil {
			return fatal(1, "Cannot run query %s ERROR : %v", st.SQL, err)
		}
	}
	return nil
}

// runScheduler starts current clients at once and times them until the
// last one is done (connecting is inside the timing, as in mariadb-slap).
func (b *Bench) runScheduler(ctx context.Context, current int, limit uint64) (time.Duration, error) {
	if b.OnLoad != nil {
		b.OnLoad(true)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, current)
	if b.Config.OnlyPrint {
		// Printing clients run one after the other, so that the printed
		// SQL is in a stable order.
		for i := 0; i < current; i++ {
			errs[i] = b.runTask(ctx, i, limit)
		}
	} else {
		for i := 0; i < current; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				errs[i] = b.runTask(ctx, i, limit)
			}(i)
		}
		wg.Wait()
	}
	d := time.Since(start)
	if b.OnLoad != nil {
		b.OnLoad(false)
	}
	for _, err := range errs {
		if err != nil {
			return d, err
		}
	}
	return d, ctx.Err()
}

// connectError is a client that could not connect: mariadb-slap prints it
// and that client does nothing, the others go on.
type connectError struct{ err error }

func (e connectError) Error() string { return e.err.Error() }
func (e connectError) Unwrap() error { return e.err }

// connectFailed is slap_connect's message: the client gives up, the
// others go on.
func (b *Bench) connectFailed(err error) {
	fmt.Fprintf(b.Err, "%s: Error when connecting to server: %d %s\n", b.prog(), errNumber(err), errText(err))
}

func (b *Bench) prog() string {
	if b.Prog == "" {
		return "benchmatrix slap"
	}
	return b.Prog
}

func (b *Bench) connect(ctx context.Context) (Session, error) {
	if b.Config.OnlyPrint {
		return printSession{b}, nil
	}
	s, err := b.Dial.Client(ctx, b.Config.CreateSchema)
	if err != nil {
		return nil, connectError{err}
	}
	return s, nil
}

// runTask is one client: its statements in order, cycling until it has
// run limit queries (once through when limit is 0), reconnecting every
// --detach statements and committing every --commit.
func (b *Bench) runTask(ctx context.Context, client int, limit uint64) (err error) {
	c := &b.Config
	s, err := b.connect(ctx)
	if err != nil {
		b.connectFailed(err)
		return nil
	}
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	b.verbose(3, "connected!\n")
	queries := uint64(0)
	commits := uint64(0)
	if c.Commit > 0 {
		if err := b.run(ctx, s, "SET AUTOCOMMIT=0"); err != nil {
			return fatal(1, "Cannot run query SET AUTOCOMMIT=0 ERROR : %v", err)
		}
	}
	stmts := b.script.Queries
	done := func() error {
		if c.Commit > 0 {
			if err := b.run(ctx, s, "COMMIT"); err != nil {
				return fatal(1, "Cannot run query COMMIT ERROR : %v", err)
			}
		}
		return nil
	}
	for {
		for i, st := range stmts {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !c.OnlyPrint && c.Detach > 0 && uint64(i)%c.Detach == 0 {
				s.Close()
				s = nil
				ns, err := b.connect(ctx)
				if err != nil {
					b.connectFailed(err)
					return nil
				}
				s = ns
			}
			sql := st.SQL
			run := true
			if st.Kind == KindSelectKey || st.Kind == KindUpdateKey {
				run = len(b.keys) > 0 // no keys (an empty table): nothing is sent
				if run {
					b.mu.Lock()
					k := b.keys[b.rand.Int()%int64(len(b.keys))]
					b.mu.Unlock()
					sql = st.SQL + " '" + k + "'"
				}
			}
			if run {
				t0 := time.Now()
				err := b.run(ctx, s, sql)
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					// mariadb-slap's clients exit(0) on a failed statement.
					return fatal(0, "Cannot run query %s ERROR : %v", sql, err)
				}
				if b.OnQuery != nil {
					b.OnQuery(client, st.Kind, time.Since(t0))
				}
			}
			queries++
			if c.Commit > 0 {
				if commits++; commits == c.Commit {
					commits = 0
					if err := b.run(ctx, s, "COMMIT"); err != nil {
						return fatal(1, "Cannot run query COMMIT ERROR : %v", err)
					}
				}
			}
			if limit > 0 && queries == limit {
				return done()
			}
		}
		if limit == 0 || queries >= limit || len(stmts) == 0 {
			return done()
		}
	}
}

// printSession is --only-print: every statement printed, nothing sent.
type printSession struct{ b *Bench }

func (p printSession) Run(_ context.Context, sql string) error {
	p.b.printf("%s;\n", sql)
	return nil
}
func (p printSession) Column(context.Context, string) ([]string, error) { return nil, nil }
func (p printSession) Use(_ context.Context, db string) error {
	p.b.printf("use %s;\n", db)
	return nil
}
func (p printSession) Close() error { return nil }

// system is C's system(): the command through /bin/sh, its exit status.
func system(cmd string) int {
	c := exec.Command("/bin/sh", "-c", cmd)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode() << 8 // a wait status, as system() returns it
	}
	return -1
}
