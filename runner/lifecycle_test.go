package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/lifecycle"
	"benchmatrix/oltp"
	"benchmatrix/record"
	"benchmatrix/results"
	"benchmatrix/server"
)

// freezer is the real engine, which freezes the sandbox's server (SIGSTOP)
// once, in the first measured run, when the engine's clock reaches at. It
// never sends SIGCONT: bringing the server back is the runner's job.
type freezer struct {
	oltp.Workload
	at time.Duration

	mu   sync.Mutex
	srv  *server.Sandbox
	once sync.Once
}

func (f *freezer) start(ctx context.Context, spec StartSpec) (server.Server, error) {
	s, err := server.StartSandbox(ctx, server.SandboxConfig{Startup: spec.Startup})
	if err == nil {
		f.mu.Lock()
		f.srv = s
		f.mu.Unlock()
	}
	return s, err
}

func (f *freezer) Run(ctx context.Context, cfg *mysql.Config, o engine.Options, report func(engine.Interval)) (*engine.Result, error) {
	var timer *time.Timer
	first := true
	res, err := f.Workload.Run(ctx, cfg, o, func(iv engine.Interval) {
		report(iv)
		if !first {
			return
		}
		first = false
		f.once.Do(func() {
			// The first interval ends at 1 s on the engine's clock.
			timer = time.AfterFunc(f.at-iv.End, func() {
				f.mu.Lock()
				pid := f.srv.PID()
				f.mu.Unlock()
				_ = syscall.Kill(pid, syscall.SIGSTOP)
			})
		})
	})
	if timer != nil {
		timer.Stop()
	}
	return res, err
}

// TestFrozenServer freezes the sandbox's server in the warm-up, 1 s into
// the measured window and 0.5 s before its end: each time the cell ends,
// the frozen seconds are zero-throughput intervals, the next cells run on
// a server brought back, and run.json is complete.
func TestFrozenServer(t *testing.T) {
	needServer(t)
	if testing.Short() {
		t.Skip("three runs on a real server")
	}
	const warm, dur = 2 * time.Second, 10 * time.Second
	cases := []struct {
		name      string
		at        time.Duration // on the engine's clock (warm-up included)
		wantOK    bool
		wantPhase lifecycle.Phase
	}{
		{"warm-up", warm / 2 * 3 / 2, false, lifecycle.PhaseWarmup},
		{"measured window", warm + time.Second, false, lifecycle.PhaseMeasure},
		{"end of the window", warm + dur - 500*time.Millisecond, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := loadFlushFor(t, dur, warm)
			plan.Cells = plan.Cells[:2]
			f := &freezer{at: tc.at}
			dir := t.TempDir()
			run, err := Run(context.Background(), plan, Config{OutDir: dir, Start: f.start, Workload: f, Log: testWriter{t}})
			if err != nil && !strings.Contains(err.Error(), ErrCellsFailed.Error()) {
				t.Fatalf("run: %v", err)
			}
			stored, rerr := results.ReadRun(dir)
			if rerr != nil {
				t.Fatalf("run.json: %v", rerr)
			}
			if stored.Status != record.StatusFinished || len(stored.Cells) != 2 {
				t.Fatalf("run.json: status %q, %d cells, want finished with 2", stored.Status, len(stored.Cells))
			}
			c := run.Cells[0]
			bound := warm + dur + DefaultGrace + 2*time.Second
			t.Logf("frozen at %s: cell %s %s in %.1f s wall (warm-up + duration + grace + 2 s = %.0f s; prepare %.1f s, server %.1f s): %s",
				tc.at, c.Name, c.Status, c.WallSeconds, bound.Seconds(), c.PrepareSeconds, c.ServerSeconds, c.Error)
			if tc.wantOK {
				if c.Status != record.CellOK {
					t.Fatalf("cell frozen at the window's end: %s %q, want ok with a stall", c.Status, c.Error)
				}
				if c.Stalls == nil || c.Stalls.Count == 0 {
					t.Errorf("cell frozen at the window's end reports no stall: %+v", c.Stalls)
				}
			} else {
				want := "the server stopped answering in " + string(tc.wantPhase)
				if c.Status != record.CellFailed || !strings.Contains(c.Error, want) {
					t.Fatalf("frozen cell: %s %q, want failed with %q", c.Status, c.Error, want)
				}
			}
			// The frozen seconds are intervals without a transaction; frozen
			// 0.5 s before the end, the window's last interval is part
			// frozen, and the stall reaches it.
			zero, measured := 0, 0
			for _, iv := range c.Intervals {
				if iv.Phase == engine.PhaseRun {
					measured++
				}
				if iv.Start >= tc.at && iv.Events == 0 && iv.Phase != engine.PhaseCheckpoint {
					zero++
				}
			}
			if tc.wantOK {
				last := c.Stalls.Episodes[len(c.Stalls.Episodes)-1]
				if last.End != measured {
					t.Errorf("the stall %+v does not reach the window's last interval (%d measured)", last, measured)
				}
			} else if zero == 0 {
				t.Errorf("no zero-throughput interval after the freeze at %s: %+v", tc.at, c.Intervals)
			}
			if tc.wantPhase == lifecycle.PhaseMeasure && (c.Stalls == nil || c.Stalls.Count == 0) {
				t.Errorf("frozen in the measured window, no stall: %+v", c.Stalls)
			}
			next := run.Cells[1]
			t.Logf("next cell %s %s in %.1f s wall", next.Name, next.Status, next.WallSeconds)
			if next.Status != record.CellOK {
				t.Fatalf("the cell after the frozen one: %s %q", next.Status, next.Error)
			}
			if left := ourServers(t); len(left) > 0 {
				t.Fatalf("server processes left after the run: %v", left)
			}
		})
	}
}

// The most natural injector, a write lock on a workload table, is checked
// once the table exists (the after-load phase), runs, and its stalls are
// found; SQL the server refuses on the loaded data fails the cell with the
// server's own words.
func TestInjectLockTables(t *testing.T) {
	needServer(t)
	if testing.Short() {
		t.Skip("runs a real server for 16 s")
	}
	src := `
[experiment]
name = "inject-lock"
duration = "14s"
warmup = "2s"
stall_threshold = 0.2
[workload]
name = "oltp_update_index"
table_size = 10000
threads = 2
rand_type = "uniform"
[inject]
every = "4s"
hold = "2s"
sql = "LOCK TABLES sbtest.sbtest1 WRITE"
`
	run, err := Run(context.Background(), planFrom(t, src), Config{OutDir: t.TempDir(), Start: sandboxStart, Log: testWriter{t}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	c := run.Cells[0]
	if c.Status != record.CellOK {
		t.Fatalf("cell: %s %q", c.Status, c.Error)
	}
	t.Logf("injected at %v; stalls: %s; detector: %+v; notes %v", c.Injected, c.Stalls.Text, c.Detector, c.ObserveNotes)
	if len(c.Injected) < 3 {
		t.Fatalf("the lock was taken %d times in the cell, want at least 3", len(c.Injected))
	}
	if c.Detector == nil || c.Detector.Hits < 2 {
		t.Fatalf("the lock's stalls were not found: %+v (%s)", c.Detector, c.Stalls.Text)
	}

	// A table the cell's data does not have: the cell fails, saying so in
	// the server's words.
	bad := strings.Replace(src, "sbtest.sbtest1", "sbtest.sbtest2", 1)
	bad = strings.Replace(bad, `duration = "14s"`, `duration = "2s"`, 1)
	run, err = Run(context.Background(), planFrom(t, bad), Config{OutDir: t.TempDir(), Start: sandboxStart, Log: testWriter{t}})
	if !errors.Is(err, ErrCellsFailed) {
		t.Fatalf("run with a lock on a table the data lacks: %v, want failed cells", err)
	}
	c = run.Cells[0]
	want := "the server stopped answering"
	if c.Status != record.CellFailed || !strings.Contains(c.Error, "[inject]") || !strings.Contains(c.Error, "sbtest2") ||
		!strings.Contains(c.Error, "Error 1146") || strings.Contains(c.Error, want) {
		t.Fatalf("cell: %s %q, want failed with the server's error 1146 naming sbtest2", c.Status, c.Error)
	}
}

// Each phase's deadline follows from the plan: the load from its rows,
// the measure from the warm-up, the duration and the grace.
func TestPhaseDeadlines(t *testing.T) {
	t.Parallel()
	r := &Runner{cfg: Config{Grace: 7 * time.Second}}
	cell := func(tables, size int, warm, dur time.Duration) *experiment.Cell {
		c := &experiment.Cell{}
		c.Workload = engine.Spec{Engine: "oltp", Options: oltp.Options{Tables: tables, TableSize: size, Warmup: warm, Time: dur}}
		c.Policy.DrainCap = 30 * time.Second
		return c
	}
	small, big := cell(1, 10000, 5*time.Second, 30*time.Second), cell(4, 50_000_000, 0, time.Minute)
	auto := cell(1, 10000, 0, 30*time.Second)
	auto.Policy.WarmupAuto, auto.Policy.WarmupCap = true, 2*time.Minute
	threads := cell(1, 10000, 0, 30*time.Second)
	threads.Workload = threads.Workload.With(func(c *engine.Common) { c.Threads = 1000 })
	events := cell(1, 10000, 0, 0)
	events.Workload = events.Workload.With(func(c *engine.Common) { c.Events = 1000 })
	cluster := cell(1, 10000, 5*time.Second, 30*time.Second)
	cluster.Topology = &experiment.Topology{Kind: "replicas", Replicas: 2}
	for _, tc := range []struct {
		name string
		c    *experiment.Cell
		p    lifecycle.Phase
		want time.Duration
	}{
		{"a small load: the floor", small, lifecycle.PhaseLoad, loadFloor},
		{"a large load: its rows at the slowest rate", big, lifecycle.PhaseLoad, 200_000_000 / loadRowsPerSecond * time.Second},
		{"prewarm as a load", big, lifecycle.PhasePrewarm, 200_000_000 / loadRowsPerSecond * time.Second},
		{"drain: its cap and the settle bound", small, lifecycle.PhaseDrain, 30*time.Second + settleTimeout},
		{"measure: connecting, warm-up, duration, grace, margin", small, lifecycle.PhaseMeasure, connectPerThread + 5*time.Second + 30*time.Second + 7*time.Second + measureMargin},
		{"automatic warm-up: its cap", auto, lifecycle.PhaseWarmup, connectPerThread + 2*time.Minute + 30*time.Second + 7*time.Second + measureMargin},
		{"many threads: their connecting", threads, lifecycle.PhaseMeasure, 1000*connectPerThread + 30*time.Second + 7*time.Second + measureMargin},
		{"a run bounded by events: the watchdog only", events, lifecycle.PhaseMeasure, 0},
		{"collect: the settle bound", small, lifecycle.PhaseCollect, settleTimeout},
		// replication.toml's async cells failed "wait for GTID: context
		// deadline exceeded" when collect had only the settle bound.
		{"collect on a cluster: the replicas' catch-up too", cluster, lifecycle.PhaseCollect, lifecycle.VerifyTimeout + settleTimeout},
		{"start", small, lifecycle.PhaseStart, startDeadline},
		{"between cells", small, lifecycle.PhaseBetween, fixedDeadline},
	} {
		if got := r.deadline(tc.c, tc.p); got != tc.want {
			t.Errorf("%s: deadline(%s) = %s, want %s", tc.name, tc.p, got, tc.want)
		}
	}
}

func TestStoppedErrorText(t *testing.T) {
	t.Parallel()
	silent := &StoppedError{Phase: lifecycle.PhaseWarmup, Silent: 5 * time.Second, Err: errors.New("worker 0: invalid connection")}
	if got, want := silent.Error(), "the server stopped answering in warm-up: no answer for 5.0 s"; got != want {
		t.Errorf("silent: %q, want %q", got, want)
	}
	late := &StoppedError{Phase: lifecycle.PhaseLoad, Deadline: 5 * time.Minute, Err: errors.New("prepare: context deadline exceeded; statement: INSERT")}
	if got := late.Error(); !strings.Contains(got, "load did not end within its deadline of 5m0s") || !strings.Contains(got, "statement: INSERT") {
		t.Errorf("late: %q", got)
	}
}
