package runner

// Fakes for the runner's logic tests: a server that keeps its variables in
// a map and answers the runner's own SQL through a small database/sql
// driver, a workload that returns made-up results, and a sink that keeps
// what it is given. No MariaDB is needed; these tests take milliseconds.

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/server"
)

// fakeServer is a server that never runs: its globals live in a map.
type fakeServer struct {
	mu        sync.Mutex
	flavor    catalog.Flavor
	startup   []server.Setting
	globals   map[string]string
	readOnly  map[string]bool // SET GLOBAL refuses these (error 1238)
	dead      bool
	restarts  int
	snapshots map[string]bool
	restores  int
	dirty     []int64 // dirty pages answered one after another (drain)
	stopped   bool
	log       []string // what happened, in order
}

var (
	_ server.Server      = (*fakeServer)(nil)
	_ server.Liveness    = (*fakeServer)(nil)
	_ server.Snapshotter = (*fakeServer)(nil)
)

func newFakeServer(startup []server.Setting) *fakeServer {
	s := &fakeServer{flavor: catalog.MariaDB, globals: map[string]string{
		"version": "10.11.0-MariaDB-fake", "max_connections": "151", "sync_binlog": "0",
		"innodb_flush_log_at_trx_commit": "1", "innodb_doublewrite": "ON", "innodb_max_dirty_pages_pct": "90", "log_bin": "OFF",
		"innodb_io_capacity": "200", "innodb_io_capacity_max": "2000",
	}, readOnly: map[string]bool{}, snapshots: map[string]bool{}}
	s.setStartup(startup)
	return s
}

func (s *fakeServer) setStartup(startup []server.Setting) {
	s.startup = append([]server.Setting(nil), startup...)
	for _, x := range startup {
		s.globals[catalog.VariableName(x.Name)] = x.Value
	}
}

func (s *fakeServer) note(format string, args ...any) {
	s.log = append(s.log, fmt.Sprintf(format, args...))
}

func (s *fakeServer) Info() server.Info {
	return server.Info{Provider: "fake", Flavor: s.flavor, Version: "10.11.0-MariaDB-fake", Address: "fake"}
}

func (s *fakeServer) Endpoint() *mysql.Config {
	c := mysql.NewConfig()
	c.Net, c.Addr, c.User = "fake", "fake", "root"
	return c
}

func (s *fakeServer) Restart(_ context.Context, startup []server.Setting) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restarts++
	s.dead = false
	s.setStartup(startup)
	s.note("restart %v", startup)
	return nil
}

func (s *fakeServer) Startup() []server.Setting {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]server.Setting(nil), s.startup...)
}

func (s *fakeServer) LogTail(int) string { return "fake log tail" }

func (s *fakeServer) Stop(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	return nil
}

func (s *fakeServer) Alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.dead
}

func (s *fakeServer) Snapshot(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snapshots[key] = true
	return nil
}

func (s *fakeServer) HasSnapshot(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshots[key]
}

func (s *fakeServer) Restore(_ context.Context, _ string, startup []server.Setting) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restores++
	s.setStartup(startup)
	return nil
}

// The fake server's SQL: just the statements the runner itself sends.

var (
	setRE    = regexp.MustCompile(`(?i)^SET GLOBAL (\w+) = '?([^']*)'?$`)
	selectRE = regexp.MustCompile(`(?i)^SELECT @@GLOBAL\.(\w+)$`)
)

type fakeConnector struct{ s *fakeServer }

func (c fakeConnector) Connect(context.Context) (driver.Conn, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.s.dead {
		return nil, driver.ErrBadConn
	}
	return &fakeConn{s: c.s}, nil
}

func (c fakeConnector) Driver() driver.Driver { return nil }

type fakeConn struct{ s *fakeServer }

func (c *fakeConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("fake: no prepare") }
func (c *fakeConn) Close() error                        { return nil }
func (c *fakeConn) Begin() (driver.Tx, error)           { return nil, errors.New("fake: no transactions") }

func (c *fakeConn) ExecContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Result, error) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case strings.HasPrefix(q, "CREATE DATABASE"):
		return driver.RowsAffected(1), nil
	case setRE.MatchString(q):
		m := setRE.FindStringSubmatch(q)
		name := strings.ToLower(m[1])
		if s.readOnly[name] {
			return nil, &mysql.MySQLError{Number: 1238, Message: "Variable '" + name + "' is a read only variable"}
		}
		s.globals[name] = m[2]
		s.note("set %s=%s", name, m[2])
		return driver.RowsAffected(0), nil
	}
	return nil, fmt.Errorf("fake server: unexpected statement %q", q)
}

func (c *fakeConn) QueryContext(_ context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case strings.HasPrefix(q, "SHOW GLOBAL VARIABLES"):
		r := &fakeRows{cols: []string{"Variable_name", "Value"}}
		want := map[string]bool{}
		for _, a := range args {
			want[fmt.Sprint(a.Value)] = true
		}
		for k, v := range s.globals {
			if len(args) == 0 || want[k] {
				r.data = append(r.data, []driver.Value{k, v})
			}
		}
		return r, nil
	case selectRE.MatchString(q):
		name := strings.ToLower(selectRE.FindStringSubmatch(q)[1])
		v, ok := s.globals[name]
		if !ok {
			return nil, &mysql.MySQLError{Number: 1193, Message: "Unknown system variable '" + name + "'"}
		}
		return &fakeRows{cols: []string{"v"}, data: [][]driver.Value{{v}}}, nil
	case strings.HasPrefix(q, "SHOW GLOBAL STATUS"):
		dirty := int64(0)
		if len(s.dirty) > 0 {
			dirty, s.dirty = s.dirty[0], s.dirty[1:]
		}
		return &fakeRows{cols: []string{"Variable_name", "Value"}, data: [][]driver.Value{
			{"Innodb_buffer_pool_pages_dirty", dirty}, {"Innodb_buffer_pool_pages_total", int64(8192)}}}, nil
	}
	return nil, fmt.Errorf("fake server: unexpected query %q", q)
}

type fakeRows struct {
	cols []string
	data [][]driver.Value
}

func (r *fakeRows) Columns() []string { return r.cols }
func (r *fakeRows) Close() error      { return nil }
func (r *fakeRows) Next(dest []driver.Value) error {
	if len(r.data) == 0 {
		return io.EOF
	}
	copy(dest, r.data[0])
	r.data = r.data[1:]
	return nil
}

// fakeWorkload makes up results; fail, if set, decides which runs fail.
type fakeWorkload struct {
	mu       sync.Mutex
	srv      func() *fakeServer
	prepares []string // data shapes loaded, in order
	runs     []string // cell workloads run, with their threads
	fail     func(o oltp.Options) error
}

func (w *fakeWorkload) Prepare(_ context.Context, _ *mysql.Config, eo engine.Options) error {
	o := asOLTP(eo)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.prepares = append(w.prepares, fmt.Sprintf("%s tables=%d size=%d", o.Workload, o.Tables, o.TableSize))
	return nil
}

func (w *fakeWorkload) Cleanup(context.Context, *mysql.Config, engine.Options) error { return nil }
func (w *fakeWorkload) Prewarm(context.Context, *mysql.Config, engine.Options) error { return nil }

// asOLTP is the oltp options the fakes read (the zero options for another
// engine's).
func asOLTP(o engine.Options) oltp.Options {
	oo, _ := o.(oltp.Options)
	return oo
}

func (w *fakeWorkload) Run(ctx context.Context, _ *mysql.Config, eo engine.Options, report func(engine.Interval)) (*engine.Result, error) {
	o := asOLTP(eo)
	w.mu.Lock()
	w.runs = append(w.runs, fmt.Sprintf("%s/t%d", o.Workload, o.Threads))
	fail := w.fail
	w.mu.Unlock()
	if fail != nil {
		if err := fail(o); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	secs := int(o.Time / time.Second)
	res := &engine.Result{Elapsed: o.Time}
	for i := 0; i < secs; i++ {
		ev := int64(100 * o.Threads)
		report(engine.Interval{Phase: engine.PhaseRun, Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Threads: o.Threads, Events: ev, Writes: ev})
		res.Events += ev
		res.Writes += ev
	}
	return res, nil
}

// memSink keeps the results in memory.
type memSink struct {
	mu      sync.Mutex
	run     *record.Run
	cells   []record.Cell
	writes  int
	summary bool
}

func (m *memSink) WriteRun(r *record.Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.run, m.writes = r, m.writes+1
	return nil
}

func (m *memSink) AppendCell(c *record.Cell) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cells = append(m.cells, *c)
	return nil
}

func (m *memSink) Close() error { return nil }

func (m *memSink) WriteSummary(*record.Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.summary = true
	return nil
}

// fakeRig wires a fake server, workload and sink into a runner Config.
type fakeRig struct {
	srv    *fakeServer
	starts int
	wl     *fakeWorkload
	sink   *memSink
	cfg    Config
	// onStart, if set, adjusts each new server (read-only variables, ...).
	onStart func(s *fakeServer)
}

func newFakeRig() *fakeRig {
	rig := &fakeRig{sink: &memSink{}}
	rig.wl = &fakeWorkload{srv: func() *fakeServer { return rig.srv }}
	rig.cfg = Config{
		Sink:     rig.sink,
		Workload: rig.wl,
		Start: func(_ context.Context, spec StartSpec) (server.Server, error) {
			rig.starts++
			rig.srv = newFakeServer(spec.Startup)
			if rig.onStart != nil {
				rig.onStart(rig.srv)
			}
			return rig.srv, nil
		},
		Connector: func(*mysql.Config) (driver.Connector, error) { return fakeConnector{rig.srv}, nil },
	}
	return rig
}
