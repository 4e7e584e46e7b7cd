package observe

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/server"
)

// Config says what a Sampler watches.
type Config struct {
	// DB is the sampler's own pool, outside the load's: open it with OpenDB
	// (one connection). It is not closed by the Sampler.
	DB *sql.DB
	// Flavor decides the queries; empty means ask the server (@@version).
	Flavor catalog.Flavor
	// Datadir locates the block device for the disk columns; empty (a
	// remote server) leaves them empty.
	Datadir string
	// ServerPID is the server process for cpu_server_pct; 0 if unknown or
	// remote.
	ServerPID int
	// PeerPIDs are the processes of the same server besides ServerPID (a
	// topology's other nodes on this host): their CPU and IO are the
	// server's own, not other load, so cpu_other_pct and disk_other_kb_s
	// leave them out.
	PeerPIDs []int
	// Cgroup is the server's own cgroup for the cg_* columns (cgroup.go);
	// zero when it has none.
	Cgroup server.CgroupPaths
	// Interval between samples; default 1 s.
	Interval time.Duration
	// Tables are the workload tables sampled each second (tables.go).
	Tables Tables
}

// Sample is one reading of every source. Values holds raw values: counters
// stay cumulative (Rates turns them into rates). Keys: status variables in
// lower case ("handler_commit"), "metric.*" (INNODB_METRICS), "ps.*"
// (performance_schema), "var.*" (global variables), "os.*" (/proc). A
// source that failed at this tick has no keys in it: a gap.
type Sample struct {
	T      time.Duration // since Start, monotonic
	Values map[string]float64
}

// Sampler reads server status and /proc at fixed ticks in its own
// goroutine, on its own connection, and never blocks the caller.
type Sampler struct {
	interval time.Duration
	sources  []source
	query    pairQuerier
	os       *osReader
	cgroup   cgroupReader
	start    time.Time
	ctx      context.Context // Start's ctx: a cancelled one means no final sample

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu      sync.Mutex
	samples []Sample
	notes   []string
	fails   map[string]*failure
}

type failure struct {
	count int
	first string
}

// OpenDB opens a pool for a Sampler: one connection, short timeouts, so a
// hung server costs a gap rather than a stuck sampler.
func OpenDB(cfg *mysql.Config) (*sql.DB, error) {
	c := cfg.Clone()
	if c.Timeout == 0 || c.Timeout > 5*time.Second {
		c.Timeout = 5 * time.Second
	}
	c.ReadTimeout, c.WriteTimeout = 10*time.Second, 10*time.Second
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db, nil
}

// Start takes the first sample (T=0) and then one every Interval, scheduled
// from the start so the ticks do not drift; a tick that is still busy when
// the next is due is skipped, not queued. It fails only on a bad Config or
// when the server cannot be asked its flavor.
func Start(ctx context.Context, cfg Config) (*Sampler, error) {
	if cfg.DB == nil {
		return nil, errors.New("observe: Config.DB is nil")
	}
	if cfg.Flavor == "" {
		f, err := detectFlavor(ctx, cfg.DB)
		if err != nil {
			return nil, err
		}
		cfg.Flavor = f
	}
	return start(ctx, cfg, dbQuerier(cfg.DB), "/proc"), nil
}

// start is Start with the server and /proc replaceable, for tests.
func start(ctx context.Context, cfg Config, q pairQuerier, proc string) *Sampler {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	s := &Sampler{
		interval: cfg.Interval,
		sources:  serverSources(cfg.Flavor),
		query:    q,
		os:       &osReader{proc: proc, serverPID: cfg.ServerPID, peerPIDs: cfg.PeerPIDs},
		cgroup:   cgroupReader{paths: cfg.Cgroup},
		ctx:      ctx,
		done:     make(chan struct{}),
		fails:    map[string]*failure{},
	}
	if src, ok := tablesSource(cfg.Tables); ok {
		s.sources = append(s.sources, src)
	}
	s.notes = append(s.notes, fmt.Sprintf("server: %s flavor, %d queries per tick", cfg.Flavor, len(s.sources)))
	s.notes = append(s.notes, s.os.resolveDisk(cfg.Datadir))
	s.notes = append(s.notes, s.cgroup.note())
	if cfg.ServerPID <= 0 {
		s.notes = append(s.notes, "cpu: server PID unknown; cpu_server_pct is empty")
	}
	var lctx context.Context
	lctx, s.cancel = context.WithCancel(ctx)
	s.start = time.Now()
	s.tick(lctx, s.start.Add(s.interval))
	go s.loop(lctx)
	return s
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := nextTick(time.Since(s.start), s.interval)
		timer.Reset(time.Until(s.start.Add(next)))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		// A tick may use the time up to the one after it.
		s.tick(ctx, s.start.Add(next+s.interval))
	}
}

// nextTick is the first multiple of interval strictly after elapsed: ticks
// are due at k × interval from the start whatever the previous one cost.
func nextTick(elapsed, interval time.Duration) time.Duration {
	if elapsed < 0 {
		return interval
	}
	return (elapsed/interval + 1) * interval
}

// tick reads every source once and appends a sample. Reads are bounded by
// deadline.
func (s *Sampler) tick(ctx context.Context, deadline time.Time) {
	tctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	vals := make(map[string]float64, 64)
	t := time.Since(s.start)
	if len(s.samples) == 0 {
		t = 0
	}
	s.os.read(vals)
	s.os.readServerIO(vals)
	s.os.readDiskQueue(vals)
	s.cgroup.read(vals)
	for _, src := range s.sources {
		rows, err := s.query(tctx, src.query)
		if err != nil {
			if ctx.Err() != nil {
				return // stopping: drop the partial sample
			}
			s.fail(src.name, err)
			continue
		}
		if len(rows) == 0 {
			s.fail(src.name, errors.New("no rows"))
			continue
		}
		storePairs(vals, src.prefix, rows)
	}
	s.mu.Lock()
	s.samples = append(s.samples, Sample{T: t, Values: vals})
	s.mu.Unlock()
}

func (s *Sampler) fail(name string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.fails[name]
	if f == nil {
		f = &failure{first: err.Error()}
		s.fails[name] = f
	}
	f.count++
}

// Stop ends sampling, takes a final sample (unless Start's ctx was
// cancelled: then it returns at once) and returns every sample. It returns
// within about one Interval (capped at 2 s) even when the server hangs.
// Calling it again returns the same samples.
func (s *Sampler) Stop() []Sample {
	s.once.Do(func() {
		s.cancel()
		<-s.done
		if s.ctx.Err() == nil {
			s.tick(context.Background(), time.Now().Add(min(s.interval, 2*time.Second)))
		}
	})
	return s.Samples()
}

// Samples returns a copy of the samples so far; safe while running.
func (s *Sampler) Samples() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.samples...)
}

// Notes explains empty columns and gaps: the device found under the
// datadir (or why none), a missing PID, and each source that failed, how
// often and the first error.
func (s *Sampler) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), s.notes...)
	for _, n := range slices.Sorted(maps.Keys(s.fails)) {
		f := s.fails[n]
		out = append(out, fmt.Sprintf("gap: query %q failed at %d of %d ticks (first: %s)", n, f.count, len(s.samples), f.first))
	}
	return out
}
