package observe

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"benchmatrix/analysis"
	"benchmatrix/catalog"
	"benchmatrix/engine"
	"benchmatrix/record"
	"benchmatrix/server"
)

// loadRun is a load of single-statement transactions beside the sampler:
// the sampled rows, and the transactions each row's interval saw (by
// completion time on the sampler's clock).
type loadRun struct {
	rows   []Row
	events []int64
	total  int64
}

// runBeside starts the sampler on sb, runs stmt on one connection until
// d has passed (calling during(ctx) beside it when not nil), lets the
// server settle for settle (its IO after the load stays in the sampled
// window), and stops. before is called just before the sampler starts,
// after just after it stopped: what they read covers the sampled window.
func runBeside(t *testing.T, ctx context.Context, sb *server.Sandbox, stmt string, d, settle time.Duration, before, after func(), during func(context.Context)) loadRun {
	t.Helper()
	db := openPool(t, sb)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if before != nil {
		before()
	}
	t0 := time.Now()
	s := samplerOn(t, ctx, sb)
	var done []time.Duration
	var wg sync.WaitGroup
	if during != nil {
		wg.Add(1)
		go func() { defer wg.Done(); during(ctx) }()
	}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			s.Stop()
			t.Fatal(err)
		}
		done = append(done, time.Since(t0))
	}
	wg.Wait()
	time.Sleep(settle)
	r := loadRun{rows: Rates(s.Stop()), total: int64(len(done))}
	if after != nil {
		after()
	}
	r.events = make([]int64, len(r.rows))
	for _, at := range done {
		for i, row := range r.rows {
			if at > row.T-row.Dt && at <= row.T {
				r.events[i]++
				break
			}
		}
	}
	return r
}

// cellOf is a measured cell of the load's rows, as the runner hands it to
// analysis.Observe.
func (r loadRun) cellOf() *record.Cell {
	c := &record.Cell{Status: record.CellOK}
	for i, row := range r.rows {
		c.Intervals = append(c.Intervals, engine.Interval{Phase: engine.PhaseRun, Start: row.T - row.Dt, End: row.T, Events: r.events[i]})
		c.Metrics = append(c.Metrics, row.Values)
	}
	analysis.Observe(c, Columns())
	return c
}

// The slow-disk preset's write cap, commit-per-insert: the mechanism's
// server writes per transaction (from the sampled cg_writes_s) match the
// server's cgroup counters read directly around the load, divided by the
// transactions done; the whole device's figure is kept beside, and is not
// smaller.
func TestServerOwnIORealSandbox(t *testing.T) {
	ctx, sb, _ := limitedSandbox(t, catalog.LimitSet{DiskWriteIOPS: 100, DiskReadIOPS: 200},
		server.Setting{Name: "innodb_flush_log_at_trx_commit", Value: "1"})
	paths, ok := sb.Cgroup()
	if !ok || paths.Device == "" {
		t.Fatalf("a limited sandbox has no cgroup paths: %+v %v", paths, ok)
	}
	mustExec(t, openPool(t, sb), "CREATE DATABASE own", "CREATE TABLE own.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB")
	writes := func() float64 {
		if paths.V2 {
			b, err := os.ReadFile(filepath.Join(paths.Dirs[""], "io.stat"))
			if err != nil {
				t.Fatal(err)
			}
			return parseIOStat(string(b), paths.Device).writeIOs
		}
		v, ok := readBlkio(filepath.Join(paths.Dirs["blkio"], "blkio.throttle.io_serviced"), paths.Device)
		if !ok {
			t.Fatal("blkio.throttle.io_serviced unreadable")
		}
		return v[1]
	}
	var w0, w1 float64
	// 1.5 s after the load: the writes the throttle still held are
	// dispatched inside the sampled window, and the window ends on an idle
	// second (the sampler's last, short interval has next to nothing).
	r := runBeside(t, ctx, sb, "INSERT INTO own.t (v) VALUES (1)", 6*time.Second, 1500*time.Millisecond,
		func() { w0 = writes() }, func() { w1 = writes() }, nil)
	direct := (w1 - w0) / float64(r.total)
	c := r.cellOf()
	got, ok := c.Mechanism["cg_writes_trx"]
	dev := c.Mechanism["disk_writes_trx"]
	t.Logf("%d inserts; the cgroup counted %.0f writes: %.2f per transaction; the mechanism says %.2f server writes/trx, %.2f device writes/trx (whole device)",
		r.total, w1-w0, direct, got, dev)
	if r.total < 50 || w1-w0 <= 0 {
		t.Fatalf("too little happened to compare: %d inserts, %.0f writes", r.total, w1-w0)
	}
	// The same window on both sides: within 5 % (measured: equal to the
	// second decimal in three runs).
	if !ok || math.Abs(got-direct) > 0.05*direct {
		t.Errorf("server writes/trx %.3f (%v), the cgroup's own counters %.3f: want within 5%%", got, ok, direct)
		for i, row := range r.rows {
			t.Logf("t=%5.2fs dt=%4.2fs transactions %3d cg_writes_s %6.1f", row.T.Seconds(), row.Dt.Seconds(), r.events[i], row.Get("cg_writes_s"))
		}
	}
	if dev < 0.9*got {
		t.Errorf("the whole device did %.3f writes/trx, fewer than the server's %.3f", dev, got)
	}
}

// Another process's IO burst beside the run (the test's own dd writing on
// the datadir's device): the seconds it ran are marked as other IO, and a
// stall in them is the host's, not the server's.
func TestOtherIOStallIsTheHostReal(t *testing.T) {
	dd, err := exec.LookPath("dd")
	if err != nil {
		t.Skip(err)
	}
	ctx, sb, tmp := limitedSandbox(t, catalog.LimitSet{}, server.Setting{Name: "innodb_flush_log_at_trx_commit", Value: "1"})
	mustExec(t, openPool(t, sb), "CREATE DATABASE oio", "CREATE TABLE oio.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB")
	// 6 s of the load alone, 6 s beside dd, 6 s alone.
	var ddFrom, ddTo time.Duration
	t0 := time.Now()
	r := runBeside(t, ctx, sb, "INSERT INTO oio.t (v) VALUES (1)", 18*time.Second, 0, nil, nil, func(ctx context.Context) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(6 * time.Second):
		}
		ddFrom = time.Since(t0)
		cctx, cancel := context.WithTimeout(ctx, 6*time.Second)
		defer cancel()
		// Two writers, O_DIRECT and a sync per MiB each: a steady burst
		// on the device, not a page-cache write the kernel flushes later.
		var dds sync.WaitGroup
		for k := 0; k < 2; k++ {
			dds.Add(1)
			go func(k int) {
				defer dds.Done()
				cmd := exec.CommandContext(cctx, dd, "if=/dev/zero", "of="+filepath.Join(tmp, fmt.Sprintf("burst%d", k)), "bs=1M", "count=4000", "oflag=direct,dsync")
				if out, err := cmd.CombinedOutput(); err != nil && cctx.Err() == nil {
					t.Errorf("dd: %v: %s", err, out)
				}
			}(k)
		}
		dds.Wait()
		ddTo = time.Since(t0)
	})
	// Removed after the run: freeing gigabytes of extents is IO of its own
	// (journal, discards) that diskstats' KiB do not show.
	os.Remove(filepath.Join(tmp, "burst0"))
	os.Remove(filepath.Join(tmp, "burst1"))
	tps := make([]float64, len(r.rows))
	inDD := make([]bool, len(r.rows))
	for i, row := range r.rows {
		tps[i] = float64(r.events[i]) / row.Dt.Seconds()
		// whole seconds inside dd's run (t0 is a little before the sampler's start)
		inDD[i] = row.T-row.Dt >= ddFrom && row.T <= ddTo
	}
	other := OtherIODominated(r.rows)
	marked, ddSecs := 0, 0
	for i := range r.rows {
		t.Logf("t=%4.1fs tps %6.0f disk_other_kb_s %8.0f server_io_kb_s %7.0f await %6.2f ms dd=%v other-io=%v",
			r.rows[i].T.Seconds(), tps[i], r.rows[i].Get("disk_other_kb_s"), r.rows[i].Get("server_io_kb_s"), r.rows[i].Get("disk_await_ms"), inDD[i], other[i])
		if inDD[i] {
			ddSecs++
			if other[i] {
				marked++
			}
		}
		// Seconds marked away from dd's run are other tenants' bursts on a
		// shared disk (seen here: 150 MiB/s for 2 s): the host's too, not
		// an error.
	}
	if ddSecs < 3 {
		t.Fatalf("dd ran over %d whole seconds of the sampler's", ddSecs)
	}
	if 2*marked < ddSecs {
		t.Errorf("other IO dominated %d of dd's %d seconds by OtherIODominated, want at least half", marked, ddSecs)
	}
	without := DetectStalls(tps, time.Second, StallOptions{Starved: Starved(r.rows)})
	with := DetectStalls(tps, time.Second, StallOptions{Starved: Starved(r.rows), OtherIO: other})
	t.Logf("without the IO attribution: %s; with it: %s", without.Text, with.Text)
	inside := 0
	for _, ep := range without.Episodes {
		n := 0
		for k := ep.Start; k < ep.End; k++ {
			if inDD[k] || k > 0 && inDD[k-1] {
				n++
			}
		}
		if 2*n >= ep.End-ep.Start {
			inside++
		}
	}
	if inside == 0 {
		t.Skipf("dd's burst did not stall the load on this disk (%s): nothing to attribute", without.Text)
	}
	if with.HostIODips < inside || with.Count > without.Count-inside {
		t.Errorf("%d stalls in dd's seconds; with the attribution %d host IO dips and %d stalls left (of %d)", inside, with.HostIODips, with.Count, without.Count)
	}
}
