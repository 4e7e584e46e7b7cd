package oltp

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"benchmatrix/engine"
)

// fakeRun is the coordinator with fake workers, in a synctest bubble: each
// worker runs 70 ms events back to back (70 ms never lands on a whole
// second, so no event ends at the same instant as a tick) and records
// them as real workers do; from freezeAt on, the "server" answers nothing
// and every event waits until the cut.
type fakeRun struct {
	o        Options
	freezeAt time.Duration // 0: never
	cancelAt time.Duration // 0: never

	// Filled in by run.
	intervals []Interval
	out       outcome
	start     time.Time
	stopAt    time.Duration // when the stop was requested
	cutAt     time.Duration // when the coordinator cut (-1: never)
	returned  time.Duration // when drive returned
	phases    []phaseSeen   // each event's start and phase
	// What the final result counts (since the last checkpoint, if any).
	finalEvents    int64
	lastCheckpoint time.Duration
}

type phaseSeen struct {
	at    time.Duration
	phase int
}

const fakeEvent = 70 * time.Millisecond

func (f *fakeRun) run(t *testing.T) {
	t.Helper()
	o := &f.o
	sh := &shared{o: o, stopCh: make(chan struct{}), fatalCh: make(chan struct{})}
	if o.Warmup == 0 {
		sh.phase.Store(phRun)
	}
	stats := make([]*workerStats, o.Threads)
	for i := range stats {
		stats[i] = newWorkerStats(o.Warmup > 0)
	}
	f.start = time.Now()
	f.cutAt = -1
	cutCh := make(chan struct{})
	var mu sync.Mutex
	var wg sync.WaitGroup
	sh.running.Store(int32(o.Threads))
	for _, ws := range stats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sh.running.Add(-1)
			for !sh.stop.Load() {
				ph := int(sh.phase.Load())
				t0 := time.Now()
				mu.Lock()
				f.phases = append(f.phases, phaseSeen{time.Since(f.start), ph})
				mu.Unlock()
				var answer <-chan time.Time // nil: frozen, no answer until the cut
				if f.freezeAt == 0 || time.Since(f.start) < f.freezeAt {
					answer = time.After(fakeEvent)
				}
				select {
				case <-answer:
					ws.record(&eventRecord{phase: ph, done: true, ns: int64(time.Since(t0)), q: counts{Reads: 1}})
				case <-cutCh: // the cut closed the "socket": dropped, as a real worker does
					ws.record(&eventRecord{phase: ph, q: counts{Reads: 1}})
					return
				}
			}
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	go func() { <-sh.stopCh; f.stopAt = time.Since(f.start) }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if f.cancelAt > 0 {
		time.AfterFunc(f.cancelAt, cancel)
	}
	co := coordinator{
		o: o, sh: sh, col: newCollector(stats), start: f.start, iv: newTally(),
		report: func(iv Interval) { f.intervals = append(f.intervals, iv) },
		cut: func() int {
			f.cutAt = time.Since(f.start)
			close(cutCh)
			return o.Threads
		},
	}
	f.out = co.drive(ctx, allDone)
	f.returned = time.Since(f.start)
	synctest.Wait()
	co.col.collect(&co.iv)
	f.finalEvents = co.col.cum[phRun].Events
	f.lastCheckpoint = co.lastCheckpoint
}

func fakeOptions(warmup, run, grace time.Duration) Options {
	o := DefaultOptions()
	o.Threads = 2
	o.Warmup, o.Time, o.ForcedShutdown = warmup, run, grace
	o.ReportInterval = time.Second
	return o
}

// The coordinator's clock in fake time: ticks on exact multiples of the
// report interval, the warm-up switch, the end of the window, intervals
// with no events while the server is frozen, and the cut when the grace
// after the window runs out.
func TestCoordinatorClockFrozenServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeRun{o: fakeOptions(2*time.Second, 3*time.Second, 2*time.Second), freezeAt: 3500 * time.Millisecond}
		f.run(t)

		type want struct {
			phase      engine.Phase
			start, end time.Duration
			events     int64
		}
		// Two workers, an event every 70 ms each: 14 each per second; the
		// freeze at 3.5 s leaves 8 each in [3 s, 4 s) and none after.
		wants := []want{
			{engine.PhaseWarmup, 0, 1 * time.Second, 28},
			{engine.PhaseWarmup, 1 * time.Second, 2 * time.Second, 28},
			{engine.PhaseRun, 2 * time.Second, 3 * time.Second, 28},
			{engine.PhaseRun, 3 * time.Second, 4 * time.Second, 16},
			{engine.PhaseRun, 4 * time.Second, 5 * time.Second, 0},
		}
		if len(f.intervals) != len(wants) {
			t.Fatalf("%d intervals, want %d: %+v", len(f.intervals), len(wants), f.intervals)
		}
		for i, w := range wants {
			iv := f.intervals[i]
			if iv.Phase != w.phase || iv.Start != w.start || iv.End != w.end || iv.Events != w.events {
				t.Errorf("interval %d: %s [%v, %v) %d events, want %s [%v, %v) %d", i,
					iv.Phase, iv.Start, iv.End, iv.Events, w.phase, w.start, w.end, w.events)
			}
		}
		// Events starting before 2 s belong to the warm-up, from 2 s on to
		// the measured window.
		for _, p := range f.phases {
			if wantPh := map[bool]int{true: phWarmup, false: phRun}[p.at < 2*time.Second]; p.phase != wantPh {
				t.Errorf("event started at %v in phase %d, want %d", p.at, p.phase, wantPh)
			}
		}
		if got := f.out.measureStart.Sub(f.start); got != 2*time.Second {
			t.Errorf("measured window began at %v, want 2s", got)
		}
		if f.stopAt != 5*time.Second || f.cutAt != 7*time.Second || f.returned != 7*time.Second {
			t.Errorf("stop at %v, cut at %v, returned at %v; want 5s, 7s, 7s", f.stopAt, f.cutAt, f.returned)
		}
		if !f.out.forced || f.out.unfinished != 2 {
			t.Errorf("outcome %+v, want forced with 2 unfinished", f.out)
		}
	})
}

// How the stop ends in other cases: the grace unused, off, or counted
// from a cancellation.
func TestCoordinatorStop(t *testing.T) {
	cases := []struct {
		name         string
		o            Options
		freezeAt     time.Duration
		cancelAt     time.Duration
		stopAt       time.Duration
		cutAt        time.Duration // -1: no cut
		returnedWith time.Duration // when drive returned
	}{
		// The last events end at 5.04 s (72 × 70 ms): no cut.
		{"healthy, grace unused", fakeOptions(0, 5*time.Second, 2*time.Second), 0, 0, 5 * time.Second, -1, 5040 * time.Millisecond},
		// The grace counts from the cancellation when it comes first.
		{"frozen, cancelled before the limit", fakeOptions(0, 10*time.Second, 2*time.Second), time.Second, 2500 * time.Millisecond, 2500 * time.Millisecond, 4500 * time.Millisecond, 4500 * time.Millisecond},
		{"frozen in the warm-up", fakeOptions(2*time.Second, 3*time.Second, 500*time.Millisecond), time.Second, 0, 5 * time.Second, 5500 * time.Millisecond, 5500 * time.Millisecond},
		// sysbench's 0: the events in flight at the limit (each worker's
		// 43rd, due at 3.01 s) are cut at once.
		{"zero-length grace", fakeOptions(0, 3*time.Second, time.Nanosecond), 0, 0, 3 * time.Second, 3*time.Second + time.Nanosecond, 3*time.Second + time.Nanosecond},
		// Off: the run waits as long as the events take.
		{"no grace", fakeOptions(0, 3*time.Second, 0), 0, 0, 3 * time.Second, -1, 3010 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeRun{o: c.o, freezeAt: c.freezeAt, cancelAt: c.cancelAt}
				f.run(t)
				if f.stopAt != c.stopAt || f.cutAt != c.cutAt || f.returned != c.returnedWith {
					t.Errorf("stop at %v, cut at %v, returned at %v; want %v, %v, %v",
						f.stopAt, f.cutAt, f.returned, c.stopAt, c.cutAt, c.returnedWith)
				}
				if f.out.forced != (c.cutAt >= 0) {
					t.Errorf("forced = %v", f.out.forced)
				}
			})
		})
	}
}

// The cut itself: a busy worker's socket is closed, which ends a read
// blocked on it; an idle worker can start nothing more; a dial after the
// cut is refused.
func TestCutWorkers(t *testing.T) {
	t.Parallel()
	busy := &worker{link: &netLink{}}
	idle := &worker{link: &netLink{}}
	client, server := net.Pipe()
	defer server.Close()
	dial := linkedDial(func(context.Context, string, string) (net.Conn, error) { return client, nil })
	if _, err := dial(withLink(context.Background(), busy.link), "tcp", "x"); err != nil {
		t.Fatal(err)
	}
	if !busy.begin() {
		t.Fatal("begin refused before the cut")
	}
	readErr := make(chan error, 1)
	go func() { _, err := client.Read(make([]byte, 1)); readErr <- err }()

	if n := cutWorkers([]*worker{busy, idle}); n != 1 {
		t.Fatalf("cut %d in flight, want 1", n)
	}
	select {
	case err := <-readErr:
		if err != io.ErrClosedPipe {
			t.Fatalf("blocked read ended with %v, want the closed socket's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cut did not end the blocked read")
	}
	if busy.finish() || !busy.wasCut() {
		t.Fatal("the busy worker's event was not marked cut")
	}
	if idle.begin() {
		t.Fatal("an idle worker could start an event after the cut")
	}
	other, _ := net.Pipe()
	dial = linkedDial(func(context.Context, string, string) (net.Conn, error) { return other, nil })
	if _, err := dial(withLink(context.Background(), busy.link), "tcp", "x"); err != errCut {
		t.Fatalf("dial after the cut: %v, want errCut", err)
	}
	if _, err := other.Write([]byte{1}); err != io.ErrClosedPipe {
		t.Fatalf("the refused connection was left open: %v", err)
	}
}

// --report-checkpoints in fake time: each checkpoint reports the measured
// events since the previous one and starts afresh, counting from the start
// of the measured window; the intervals still see every event, whether or
// not a checkpoint fell inside them; nothing is lost or counted twice.
func TestCoordinatorCheckpoints(t *testing.T) {
	for _, ri := range []time.Duration{time.Second, 2 * time.Second} {
		t.Run(ri.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := fakeOptions(time.Second, 4*time.Second, 0)
				o.ReportInterval = ri
				o.ReportCheckpoints = []time.Duration{0, time.Second, 2 * time.Second}
				f := &fakeRun{o: o}
				f.run(t)
				var cps []Interval
				var ivEvents int64
				for _, iv := range f.intervals {
					switch iv.Phase {
					case engine.PhaseCheckpoint:
						cps = append(cps, iv)
					case engine.PhaseRun:
						ivEvents += iv.Events
					}
				}
				// The checkpoint at 0 has passed when the window starts: skipped.
				if len(cps) != 2 {
					t.Fatalf("%d checkpoints, want 2: %+v", len(cps), cps)
				}
				var cpEvents int64
				for i, cp := range cps {
					wantEnd := o.Warmup + time.Duration(i+1)*time.Second
					r := cp.Checkpoint
					if cp.End != wantEnd || r.Elapsed != time.Second || r.TotalTime != time.Duration(i+1)*time.Second {
						t.Errorf("checkpoint %d at %v: elapsed %v, total %v; want at %v, 1s, %ds", i, cp.End, r.Elapsed, r.TotalTime, wantEnd, i+1)
					}
					// Two workers, an event every 70 ms: 26 to 29 per second (the first second starts with events still in the warm-up).
					if r.Events < 26 || r.Events > 29 || r.Fairness.EventsAvg != float64(r.Events)/2 {
						t.Errorf("checkpoint %d: %d events, fairness %+v", i, r.Events, r.Fairness)
					}
					cpEvents += r.Events
				}
				if f.lastCheckpoint != 3*time.Second {
					t.Errorf("last checkpoint at %v, want 3s", f.lastCheckpoint)
				}
				if cpEvents+f.finalEvents != ivEvents {
					t.Errorf("checkpoints %d + final %d events != %d in the intervals", cpEvents, f.finalEvents, ivEvents)
				}
			})
		})
	}
}
