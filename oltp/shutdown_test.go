package oltp

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"benchmatrix/sqlconn"
)

// TestForcedShutdown runs the forced shutdown and the ProcReserver against
// a real server, one sandbox for all its subtests.
func TestForcedShutdown(t *testing.T) {
	sb := startSandbox(t)
	ctx := context.Background()
	cfg, db := testDB(t, sb, "shutdown")
	o := engineOptions(t, "oltp_point_select", map[string]string{"table_size": "1000", "rand_type": "uniform"})
	if err := Prepare(ctx, cfg, o, nil); err != nil {
		t.Fatal(err)
	}

	// A server frozen (SIGSTOP) 1 s into a 3 s window, resumed only long
	// after the window and its 2 s grace: the run must not wait for it.
	t.Run("frozen_server", func(t *testing.T) {
		o := o
		o.Threads, o.Time, o.ForcedShutdown, o.ReportInterval = 2, 3*time.Second, 2*time.Second, 500*time.Millisecond
		pid := sb.PID()
		if pid == 0 {
			t.Fatal("no server process")
		}
		resumed := make(chan struct{})
		var resumeOnce sync.Once
		resume := func() {
			resumeOnce.Do(func() {
				if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
					t.Errorf("SIGCONT: %v", err)
				}
				close(resumed)
			})
		}
		t.Cleanup(resume) // never leave the server stopped
		var (
			mu     sync.Mutex
			ivs    []Interval
			frozen atomic.Bool
		)
		report := func(iv Interval) {
			mu.Lock()
			ivs = append(ivs, iv)
			mu.Unlock()
			if iv.End == time.Second && frozen.CompareAndSwap(false, true) {
				if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
					t.Errorf("SIGSTOP: %v", err)
					return
				}
				// Well after the deadline (5 s from the start of the clocks).
				time.AfterFunc(8*time.Second, resume)
			}
		}
		res, err := Run(ctx, cfg, o, report)
		select {
		case <-resumed:
			t.Fatalf("Run returned only after the server was resumed (err %v)", err)
		default:
		}
		resume()
		if !frozen.Load() {
			t.Fatalf("the server was never frozen: intervals %+v", ivs)
		}
		if err != nil {
			t.Fatalf("a forced shutdown is not an error: %v", err)
		}
		if !res.ForcedShutdown || res.Unfinished != int64(o.Threads) {
			t.Fatalf("forced %v, unfinished %d; want cut with %d unfinished", res.ForcedShutdown, res.Unfinished, o.Threads)
		}
		// The cut comes after the window and the grace, never before (an
		// upper bound would be a timing assertion; "before SIGCONT" is the
		// one above).
		if res.Elapsed < o.Time+o.ForcedShutdown || res.Events == 0 {
			t.Fatalf("elapsed %v with %d events, want at least %v", res.Elapsed, res.Events, o.Time+o.ForcedShutdown)
		}
		mu.Lock()
		defer mu.Unlock()
		// One interval per tick through the freeze, none after the window;
		// from 1.5 s on (the freeze began at 1 s, when answers already on
		// their way may still arrive) they have no events.
		if len(ivs) != 6 {
			t.Fatalf("%d intervals, want 6 (every 0.5 s of the 3 s window): %+v", len(ivs), ivs)
		}
		for i, iv := range ivs {
			if wantEnd := time.Duration(i+1) * 500 * time.Millisecond; iv.End != wantEnd || iv.Threads != o.Threads {
				t.Errorf("interval %d ends at %v with %d threads, want %v and %d", i, iv.End, iv.Threads, wantEnd, o.Threads)
			}
			switch {
			case iv.Start < time.Second && iv.Events == 0:
				t.Errorf("interval %d before the freeze has no events", i)
			case iv.Start >= 1500*time.Millisecond && (iv.Events != 0 || iv.Reads != 0):
				t.Errorf("interval %d [%v, %v) during the freeze has %d events", i, iv.Start, iv.End, iv.Events)
			}
		}
		// The server is back, and usable.
		qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := db.PingContext(qctx); err != nil {
			t.Fatalf("server after SIGCONT: %v", err)
		}
	})

	// A statement stuck behind a lock that outlasts the window and the
	// grace is cut too, on blocking sockets and on the netpoller alike.
	t.Run("row_lock", func(t *testing.T) {
		cases := []struct {
			name    string
			threads int
			procs   sqlconn.ProcReserver
		}{
			{"one_thread", 1, nil},
			{"two_threads_no_reserver", 2, nil},
			{"two_threads_reserver", 2, sqlconn.ProcReserverFunc(func(int) func() { return func() {} })},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				o := o
				o.Threads, o.Time, o.ForcedShutdown, o.ReportInterval = c.threads, 2*time.Second, time.Second, 500*time.Millisecond
				t.Logf("blocking sockets: %v", useBlocking(cfg, c.threads, c.procs))
				lock, err := db.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer lock.Close()
				locked := make(chan error, 1)
				var once sync.Once
				report := func(iv Interval) {
					if iv.End == 500*time.Millisecond {
						once.Do(func() {
							go func() {
								_, err := lock.ExecContext(ctx, "LOCK TABLES sbtest1 WRITE")
								locked <- err
							}()
						})
					}
				}
				res, err := RunWith(ctx, cfg, o, report, c.procs)
				if lerr := <-locked; lerr != nil {
					t.Fatal(lerr)
				}
				if _, uerr := lock.ExecContext(ctx, "UNLOCK TABLES"); uerr != nil {
					t.Fatal(uerr)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !res.ForcedShutdown || res.Unfinished != int64(c.threads) || res.Errors != 0 || res.Events == 0 {
					t.Fatalf("forced %v unfinished %d errors %d events %d; want cut with %d unfinished, no errors",
						res.ForcedShutdown, res.Unfinished, res.Errors, res.Events, c.threads)
				}
			})
		}
	})

	// Without a cut the flag stays off, with the grace set.
	t.Run("healthy_run_not_cut", func(t *testing.T) {
		o := o
		o.Threads, o.Time, o.ForcedShutdown = 2, time.Second, 5*time.Second
		res, err := Run(ctx, cfg, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.ForcedShutdown || res.Unfinished != 0 || res.Events == 0 {
			t.Fatalf("forced %v unfinished %d events %d", res.ForcedShutdown, res.Unfinished, res.Events)
		}
	})

	// The engine never changes GOMAXPROCS itself; a run with blocking
	// sockets asks its ProcReserver, once, and gives the room back.
	t.Run("procs", func(t *testing.T) {
		before := runtime.GOMAXPROCS(0)
		threads := min(maxBlockingThreads(), before+1) // more than GOMAXPROCS has room for
		o := o
		o.Threads, o.Time, o.ReportInterval = threads, time.Second, 250*time.Millisecond
		var changed atomic.Bool
		report := func(Interval) {
			if runtime.GOMAXPROCS(0) != before {
				changed.Store(true)
			}
		}
		if _, err := Run(ctx, cfg, o, report); err != nil {
			t.Fatal(err)
		}
		if changed.Load() || runtime.GOMAXPROCS(0) != before {
			t.Fatalf("Run without a reserver changed GOMAXPROCS from %d", before)
		}
		if threads+1 > before && useBlocking(cfg, threads, nil) {
			t.Fatalf("%d threads with GOMAXPROCS %d use blocking sockets without a reserver", threads, before)
		}

		var reserved, released atomic.Int32
		var gotN atomic.Int32
		procs := sqlconn.ProcReserverFunc(func(n int) func() {
			reserved.Add(1)
			gotN.Store(int32(n))
			return func() { released.Add(1) }
		})
		if !useBlocking(cfg, threads, procs) {
			t.Skipf("blocking sockets are not used for %d threads here", threads)
		}
		if _, err := RunWith(ctx, cfg, o, report, procs); err != nil {
			t.Fatal(err)
		}
		if reserved.Load() != 1 || released.Load() != 1 || int(gotN.Load()) != threads {
			t.Fatalf("Reserve called %d times (n = %d), release %d times; want once with %d, once",
				reserved.Load(), gotN.Load(), released.Load(), threads)
		}
		if changed.Load() || runtime.GOMAXPROCS(0) != before {
			t.Fatalf("GOMAXPROCS changed from %d by the engine", before)
		}
	})
}
