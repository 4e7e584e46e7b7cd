package observe

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"benchmatrix/catalog"
)

// The sampler's timing in fake time (testing/synctest): every sleep, timer
// and deadline inside a bubble runs on the bubble's clock, which moves only
// when every goroutine in it is blocked, so times can be compared exactly.
// The server is start's pairQuerier seam (or, for Start itself, a
// database/sql connector), never a network connection: a bubble must not
// do real network I/O.

// clockServer is a fake server that records when (on the bubble's clock,
// from zero at start) each of the sampler's queries began, and can make a
// query slow.
type clockServer struct {
	mu    sync.Mutex
	t0    time.Time
	at    []time.Duration
	delay func(call int, at time.Duration) (d time.Duration, honourCtx bool)
}

// newClockServer must be called inside the bubble, right before start, so
// that its zero is the sampler's.
func newClockServer(delay func(call int, at time.Duration) (time.Duration, bool)) *clockServer {
	return &clockServer{t0: time.Now(), delay: delay}
}

func (f *clockServer) query(ctx context.Context, q string) ([][2]string, error) {
	f.mu.Lock()
	at := time.Since(f.t0)
	f.at = append(f.at, at)
	call := len(f.at)
	f.mu.Unlock()
	if f.delay != nil {
		if d, honour := f.delay(call, at); d > 0 {
			if honour {
				timer := time.NewTimer(d)
				defer timer.Stop()
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-timer.C:
				}
			} else {
				time.Sleep(d) // a driver that ignores the deadline
			}
		}
	}
	return [][2]string{{"Uptime", strconv.Itoa(100 + call)}, {"Handler_commit", strconv.Itoa(1000 * call)}}, nil
}

func (f *clockServer) calls() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.at)
}

// hangFrom makes every query from the given call on block until its
// deadline (a hung server that respects the context).
func hangFrom(first int) func(int, time.Duration) (time.Duration, bool) {
	return func(call int, _ time.Duration) (time.Duration, bool) {
		if call >= first {
			return 24 * time.Hour, true
		}
		return 0, false
	}
}

func sampleTimes(samples []Sample) []time.Duration {
	out := make([]time.Duration, len(samples))
	for i, s := range samples {
		out[i] = s.T
	}
	return out
}

func seconds(xs ...float64) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x * float64(time.Second))
	}
	return out
}

// syncTestProc is a /proc with just enough for the OS values, so a tick
// whose server query failed still has keys (os.cpu.*).
func syncTestProc(t *testing.T) string {
	return fakeProc(t, map[string]string{"stat": "cpu 1 1 1 1 1 1 1 1\n", "self/stat": "1 (x) S 1 1 1 0 -1 0 0 0 0 0 5 5 0"})
}

// Ticks are due at k × Interval from the start whatever each costs: a
// query of 300 ms every tick does not make them drift, and the sample's T
// is the tick's due time.
func TestSamplerSynctestTicksAligned(t *testing.T) {
	t.Parallel()
	proc := syncTestProc(t)
	synctest.Test(t, func(t *testing.T) {
		f := newClockServer(func(int, time.Duration) (time.Duration, bool) { return 300 * time.Millisecond, true })
		s := start(context.Background(), Config{Flavor: catalog.MariaDB, Interval: time.Second}, f.query, proc)
		// Start takes the first sample itself, before it returns.
		if d := time.Since(f.t0); d != 300*time.Millisecond {
			t.Errorf("Start took %v, want the first query's 300ms", d)
		}
		if got := sampleTimes(s.Samples()); !slices.Equal(got, seconds(0)) {
			t.Fatalf("after Start: samples at %v, want [0s]", got)
		}
		time.Sleep(time.Until(f.t0.Add(5500 * time.Millisecond)))
		synctest.Wait()
		if got, want := f.calls(), seconds(0, 1, 2, 3, 4, 5); !slices.Equal(got, want) {
			t.Errorf("queries at %v, want %v", got, want)
		}
		if got, want := sampleTimes(s.Samples()), seconds(0, 1, 2, 3, 4, 5); !slices.Equal(got, want) {
			t.Errorf("samples at %v, want %v", got, want)
		}
		t0 := time.Now()
		samples := s.Stop()
		// The final sample is taken at Stop, and costs one query.
		if d := time.Since(t0); d != 300*time.Millisecond {
			t.Errorf("Stop took %v, want the final query's 300ms", d)
		}
		if got, want := sampleTimes(samples), seconds(0, 1, 2, 3, 4, 5, 5.5); !slices.Equal(got, want) {
			t.Errorf("after Stop: samples at %v, want %v", got, want)
		}
		for _, sm := range samples {
			if _, ok := sm.Values[keyUptime]; !ok {
				t.Errorf("sample at %v has no server values: %v", sm.T, sm.Values)
			}
		}
		if n := len(f.calls()); n != 7 {
			t.Errorf("%d queries, want 7", n)
		}
		// Nothing runs after Stop.
		time.Sleep(3 * time.Second)
		if n := len(f.calls()); n != 7 {
			t.Errorf("%d queries 3 s after Stop, want still 7", n)
		}
	})
}

// A query still running when the next tick is due is cut off by that
// deadline: the tick keeps its OS values, the server's are a gap counted in
// Notes, and the tick that was due meanwhile is skipped, not queued, so
// the next one comes at the following multiple of the interval.
func TestSamplerSynctestSlowQueryCutAtNextTick(t *testing.T) {
	t.Parallel()
	proc := syncTestProc(t)
	synctest.Test(t, func(t *testing.T) {
		f := newClockServer(func(call int, _ time.Duration) (time.Duration, bool) {
			if call == 3 { // the tick at 2 s hangs
				return time.Hour, true
			}
			return 0, false
		})
		s := start(context.Background(), Config{Flavor: catalog.MariaDB, Interval: time.Second}, f.query, proc)
		time.Sleep(2*time.Second + 999*time.Millisecond)
		synctest.Wait()
		if got := sampleTimes(s.Samples()); !slices.Equal(got, seconds(0, 1)) {
			t.Fatalf("just before the deadline: samples at %v, want [0s 1s] (the tick at 2s still running)", got)
		}
		time.Sleep(2*time.Second + 501*time.Millisecond) // to 5.5 s
		synctest.Wait()
		if got, want := f.calls(), seconds(0, 1, 2, 4, 5); !slices.Equal(got, want) {
			t.Errorf("queries at %v, want %v (3s skipped)", got, want)
		}
		samples := s.Stop()
		if got, want := sampleTimes(samples), seconds(0, 1, 2, 4, 5, 5.5); !slices.Equal(got, want) {
			t.Fatalf("samples at %v, want %v", got, want)
		}
		cut := samples[2]
		if _, ok := cut.Values[keyUptime]; ok {
			t.Errorf("the cut-off tick has server values: %v", cut.Values)
		}
		if _, ok := cut.Values["os.cpu.total"]; !ok {
			t.Errorf("the cut-off tick lost its OS values: %v", cut.Values)
		}
		for _, i := range []int{0, 1, 3, 4, 5} {
			if _, ok := samples[i].Values[keyUptime]; !ok {
				t.Errorf("sample at %v has no server values", samples[i].T)
			}
		}
		want := `gap: query "status" failed at 1 of 6 ticks (first: context deadline exceeded)`
		if notes := s.Notes(); !slices.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, strings.Join(notes, "\n"))
		}
		// Rates spans the skipped tick with one row of two seconds.
		rows := Rates(samples)
		if len(rows) != 5 || rows[2].T != 4*time.Second || rows[2].Dt != 2*time.Second {
			t.Errorf("rows: %d, third at %v over %v; want 5, the third at 4s over 2s", len(rows), rows[2].T, rows[2].Dt)
		}
	})
}

// A query that ignores its deadline (a driver without context support)
// makes a late but complete sample, stamped with its tick's due time; the
// ticks that fell due meanwhile are skipped, not run back to back after it.
func TestSamplerSynctestSlowQueryIgnoringDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newClockServer(func(call int, _ time.Duration) (time.Duration, bool) {
			if call == 3 { // the tick at 2 s takes 2.5 s: until 4.5 s
				return 2500 * time.Millisecond, false
			}
			return 0, false
		})
		s := start(context.Background(), Config{Flavor: catalog.MariaDB, Interval: time.Second}, f.query, t.TempDir())
		time.Sleep(6500 * time.Millisecond)
		synctest.Wait()
		if got, want := f.calls(), seconds(0, 1, 2, 5, 6); !slices.Equal(got, want) {
			t.Errorf("queries at %v, want %v (3s and 4s skipped)", got, want)
		}
		samples := s.Stop()
		if got, want := sampleTimes(samples), seconds(0, 1, 2, 5, 6, 6.5); !slices.Equal(got, want) {
			t.Fatalf("samples at %v, want %v", got, want)
		}
		if _, ok := samples[2].Values[keyUptime]; !ok {
			t.Errorf("the late sample lost its server values: %v", samples[2].Values)
		}
		for _, n := range s.Notes() {
			if strings.HasPrefix(n, "gap:") {
				t.Errorf("a late but successful query noted as a gap: %s", n)
			}
		}
	})
}

// Stop returns within one Interval, capped at 2 s, even when the server
// hangs: the tick in flight is dropped, the final one is bounded. With
// Start's context cancelled it returns at once and queries nothing more.
func TestSamplerSynctestStopPrompt(t *testing.T) {
	t.Parallel()
	proc := syncTestProc(t)
	for _, c := range []struct {
		name     string
		interval time.Duration
		stopAt   time.Duration // when Stop is called
		want     time.Duration // how long Stop takes
	}{
		{"interval 1s", time.Second, 2500 * time.Millisecond, time.Second},
		{"interval 300ms", 300 * time.Millisecond, 1000 * time.Millisecond, 300 * time.Millisecond},
		{"interval 5s capped at 2s", 5 * time.Second, 7 * time.Second, 2 * time.Second},
	} {
		t.Run("hung/"+c.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newClockServer(hangFrom(2)) // every tick after Start's first hangs
				s := start(context.Background(), Config{Flavor: catalog.MariaDB, Interval: c.interval}, f.query, proc)
				time.Sleep(c.stopAt)
				synctest.Wait()
				inFlight := len(s.Samples())
				t0 := time.Now()
				samples := s.Stop()
				if d := time.Since(t0); d != c.want {
					t.Errorf("Stop took %v with a hung server, want %v", d, c.want)
				}
				// The tick cut off by Stop leaves no sample; the final one is
				// a gap at the time Stop was called.
				if len(samples) != inFlight+1 {
					t.Fatalf("%d samples before Stop, %d after; want one more (the final)", inFlight, len(samples))
				}
				last := samples[len(samples)-1]
				if last.T != c.stopAt {
					t.Errorf("final sample at %v, want %v", last.T, c.stopAt)
				}
				if _, ok := last.Values[keyUptime]; ok {
					t.Errorf("final sample of a hung server has server values")
				}
				if _, ok := last.Values["os.cpu.total"]; !ok {
					t.Errorf("final sample lost its OS values")
				}
				if again := s.Stop(); len(again) != len(samples) {
					t.Errorf("second Stop: %d samples, first %d", len(again), len(samples))
				}
			})
		})
	}

	t.Run("healthy", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			f := newClockServer(nil)
			s := start(context.Background(), Config{Flavor: catalog.MariaDB, Interval: time.Second}, f.query, proc)
			time.Sleep(1700 * time.Millisecond)
			t0 := time.Now()
			samples := s.Stop()
			if d := time.Since(t0); d != 0 {
				t.Errorf("Stop took %v of fake time with an instant server", d)
			}
			if got, want := sampleTimes(samples), seconds(0, 1, 1.7); !slices.Equal(got, want) {
				t.Errorf("samples at %v, want %v", got, want)
			}
		})
	})

	t.Run("ctx cancelled", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := newClockServer(nil)
			s := start(ctx, Config{Flavor: catalog.MariaDB, Interval: time.Second}, f.query, proc)
			time.Sleep(2500 * time.Millisecond)
			cancel()
			time.Sleep(3 * time.Second) // sampling has ended: nothing more is taken
			synctest.Wait()
			t0 := time.Now()
			samples := s.Stop()
			if d := time.Since(t0); d != 0 {
				t.Errorf("Stop after cancel took %v", d)
			}
			if got, want := sampleTimes(samples), seconds(0, 1, 2); !slices.Equal(got, want) {
				t.Errorf("samples at %v, want %v (none after the cancel, no final one)", got, want)
			}
			if got, want := f.calls(), seconds(0, 1, 2); !slices.Equal(got, want) {
				t.Errorf("queries at %v, want %v", got, want)
			}
		})
	})

	// A cancel during a hung tick drops it: Stop neither waits for the
	// deadline nor keeps a partial sample.
	t.Run("ctx cancelled during a hung tick", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := newClockServer(hangFrom(3))
			s := start(ctx, Config{Flavor: catalog.MariaDB, Interval: time.Second}, f.query, proc)
			time.Sleep(2500 * time.Millisecond) // the tick at 2 s hangs
			cancel()
			t0 := time.Now()
			samples := s.Stop()
			if d := time.Since(t0); d != 0 {
				t.Errorf("Stop took %v", d)
			}
			if got, want := sampleTimes(samples), seconds(0, 1); !slices.Equal(got, want) {
				t.Errorf("samples at %v, want %v", got, want)
			}
		})
	})
}

// With a server hung from the start, Start waits for its first sample up to
// one Interval and returns with a gap at T=0; the tick due at that moment
// is skipped like any other.
func TestSamplerSynctestStartHung(t *testing.T) {
	t.Parallel()
	proc := syncTestProc(t)
	synctest.Test(t, func(t *testing.T) {
		f := newClockServer(hangFrom(1))
		t0 := time.Now()
		s := start(context.Background(), Config{Flavor: catalog.MariaDB, Interval: time.Second}, f.query, proc)
		if d := time.Since(t0); d != time.Second {
			t.Errorf("Start took %v with a hung server, want one interval (1s)", d)
		}
		time.Sleep(1500 * time.Millisecond) // to 2.5 s
		synctest.Wait()
		if got, want := f.calls(), seconds(0, 2); !slices.Equal(got, want) {
			t.Errorf("queries at %v, want %v", got, want)
		}
		samples := s.Stop()
		if len(samples) == 0 || samples[0].T != 0 {
			t.Fatalf("samples at %v, want the first at 0", sampleTimes(samples))
		}
		if _, ok := samples[0].Values[keyUptime]; ok {
			t.Error("first sample of a hung server has server values")
		}
	})
}

// Start itself, through a *sql.DB: the flavor is asked of the server, the
// ticks read through database/sql on the bubble's clock, and a query hung
// in the driver is cut off by the tick's deadline there too. The DB is a
// connector (sql.OpenDB), so nothing is registered globally and no socket
// is opened.
func TestSamplerSynctestStartThroughDB(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newClockServer(func(call int, _ time.Duration) (time.Duration, bool) {
			if call == 3 { // the tick at 2 s hangs in the driver
				return time.Hour, true
			}
			return 0, false
		})
		conn := &fakeConnector{srv: f}
		db := sql.OpenDB(conn)
		defer db.Close()
		s, err := Start(context.Background(), Config{DB: db, Interval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		// Start's own query (the version) costs no fake time, so the
		// sampler's zero is the clockServer's.
		time.Sleep(4500 * time.Millisecond)
		synctest.Wait()
		samples := s.Stop()
		if got, want := sampleTimes(samples), seconds(0, 1, 2, 4, 4.5); !slices.Equal(got, want) {
			t.Errorf("samples at %v, want %v", got, want)
		}
		if got := conn.versionQueries(); got != 1 {
			t.Errorf("%d SELECT @@version, want 1", got)
		}
		notes := strings.Join(s.Notes(), "\n")
		if !strings.Contains(notes, "mariadb flavor, 1 queries per tick") {
			t.Errorf("flavor not detected as MariaDB:\n%s", notes)
		}
		if !strings.Contains(notes, `"status" failed at 1 of 5 ticks (first: context deadline exceeded)`) {
			t.Errorf("the hung tick is not noted as a gap:\n%s", notes)
		}
		for i, sm := range samples {
			_, ok := sm.Values[keyUptime]
			if ok == (i == 2) {
				t.Errorf("sample %d at %v: server values %v", i, sm.T, ok)
			}
		}
	})
}

// fakeConnector is a database/sql connector whose connections answer
// SELECT @@version with a MariaDB version and every other query from a
// clockServer.
type fakeConnector struct {
	srv      *clockServer
	mu       sync.Mutex
	versions int
}

var (
	_ driver.Connector      = (*fakeConnector)(nil)
	_ driver.QueryerContext = fakeConn{}
)

func (c *fakeConnector) Connect(context.Context) (driver.Conn, error) { return fakeConn{c}, nil }
func (c *fakeConnector) Driver() driver.Driver                        { return fakeDriver{c} }

func (c *fakeConnector) versionQueries() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.versions
}

type fakeDriver struct{ c *fakeConnector }

func (d fakeDriver) Open(string) (driver.Conn, error) { return fakeConn(d), nil }

type fakeConn struct{ c *fakeConnector }

func (fakeConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("fakeConn: no prepared statements")
}
func (fakeConn) Close() error              { return nil }
func (fakeConn) Begin() (driver.Tx, error) { return nil, errors.New("fakeConn: no transactions") }

func (fc fakeConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if query == "SELECT @@version" {
		fc.c.mu.Lock()
		fc.c.versions++
		fc.c.mu.Unlock()
		return &fakeRows{cols: []string{"@@version"}, rows: [][]driver.Value{{"10.11.6-MariaDB-0+deb12u1"}}}, nil
	}
	pairs, err := fc.c.srv.query(ctx, query)
	if err != nil {
		return nil, err
	}
	r := &fakeRows{cols: []string{"VARIABLE_NAME", "VARIABLE_VALUE"}}
	for _, p := range pairs {
		r.rows = append(r.rows, []driver.Value{p[0], []byte(p[1])})
	}
	return r, nil
}

type fakeRows struct {
	cols []string
	rows [][]driver.Value
}

func (r *fakeRows) Columns() []string { return r.cols }
func (r *fakeRows) Close() error      { return nil }
func (r *fakeRows) Next(dest []driver.Value) error {
	if len(r.rows) == 0 {
		return io.EOF
	}
	copy(dest, r.rows[0])
	r.rows = r.rows[1:]
	return nil
}
