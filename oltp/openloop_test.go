package oltp

import (
	"context"
	"testing"
	"time"
)

// TestOpenLoopFarAboveCapacity offers a rate far above what one worker can
// serve (oltp_read_only's 14 statements per event: one worker serves a few
// thousand a second; point selects reached 25,600/s on a quiet host, too
// close to 50,000/s to call the excess far): the run ends at its time
// limit without error (sysbench aborts with
// "event queue is full"), and the arrivals it could not serve are counted:
// dropped by the full queue, or left in it with their age at the window's
// end.
func TestOpenLoopFarAboveCapacity(t *testing.T) {
	sb := startSandbox(t)
	ctx := context.Background()
	cfg, _ := testDB(t, sb, "openloop")
	o := engineOptions(t, "oltp_read_only", map[string]string{"table_size": "1000", "threads": "1"})
	if err := Prepare(ctx, cfg, o, nil); err != nil {
		t.Fatal(err)
	}
	o.Rate = 50000
	o.Time = 2 * time.Second
	res, err := Run(ctx, cfg, o, nil)
	if err != nil {
		t.Fatalf("far above capacity: %v", err)
	}
	offered := res.Events + res.Backlog + res.Dropped
	t.Logf("offered %d: served %d, queued at the end %d, dropped %d, late %d", offered, res.Events, res.Backlog, res.Dropped, res.Late)
	if res.Events == 0 || res.Backlog+res.Dropped == 0 {
		t.Fatalf("served %d, backlog %d, dropped %d: want work served and the excess counted", res.Events, res.Backlog, res.Dropped)
	}
	if res.Backlog+res.Dropped < res.Events {
		t.Errorf("at 50,000/s one worker served %d and only %d were left: the excess is not counted", res.Events, res.Backlog+res.Dropped)
	}
	if int64(len(res.BacklogAges)) != res.Backlog {
		t.Errorf("%d backlog ages for a backlog of %d", len(res.BacklogAges), res.Backlog)
	}
	var oldest time.Duration
	for _, a := range res.BacklogAges {
		oldest = max(oldest, a)
		if a < 0 || a > o.Time {
			t.Errorf("a measured arrival waited %v at the window's end, outside [0, %v]", a, o.Time)
		}
	}
	if res.Backlog > 0 && oldest == 0 {
		t.Errorf("the backlog's oldest arrival has age 0")
	}
	// A saturated worker never waits for an arrival: no client delay to
	// measure beyond the first ones.
	if n := res.ClientDelay.(*DelayHist).Total(); n > res.Events {
		t.Errorf("%d client delays for %d events", n, res.Events)
	}
}

// TestOpenLoopClientDelayMeasured: at a rate one worker serves easily, the
// worker waits for most arrivals, and the delay from each arrival's
// intended start to the worker taking it is recorded as the client's own.
func TestOpenLoopClientDelayMeasured(t *testing.T) {
	sb := startSandbox(t)
	ctx := context.Background()
	cfg, _ := testDB(t, sb, "openloop")
	o := engineOptions(t, "oltp_point_select", map[string]string{"table_size": "1000", "threads": "2"})
	if err := Prepare(ctx, cfg, o, nil); err != nil {
		t.Fatal(err)
	}
	o.Rate = 200
	o.Time = 2 * time.Second
	res, err := Run(ctx, cfg, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	delays := res.ClientDelay.(*DelayHist)
	n := delays.Total()
	t.Logf("%d events, %d client delays measured, their p99 %v, backlog %d", res.Events, n, delays.Quantile(0.99), res.Backlog)
	if n == 0 || n > res.Events {
		t.Fatalf("%d client delays for %d events", n, res.Events)
	}
	if 2*n < res.Events {
		t.Errorf("only %d of %d events found a worker waiting at 200/s", n, res.Events)
	}
}

func TestDelayHist(t *testing.T) {
	var h DelayHist
	for _, d := range []time.Duration{500 * time.Nanosecond, 3 * time.Microsecond, time.Millisecond, 60 * time.Millisecond, 2 * time.Second} {
		h.record(int64(d))
	}
	if h.Total() != 5 {
		t.Fatalf("total %d", h.Total())
	}
	if got := h.AtLeast(40 * time.Millisecond); got != 2 {
		t.Errorf("AtLeast(40ms) = %d, want 2", got)
	}
	// A delay in the bucket the limit falls in is not counted against the
	// client: 60 ms is in [46.3, 65.5) ms.
	if got := h.AtLeast(50 * time.Millisecond); got != 1 {
		t.Errorf("AtLeast(50ms) = %d, want 1", got)
	}
	if q := h.Quantile(0.5); q < time.Millisecond || q > 2*time.Millisecond {
		t.Errorf("median bucket bound %v, want ~1 ms", q)
	}
}
