package tpcc

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestStuckStatementsAreCut holds every district and warehouse row of a
// prepared table set locked from another connection, so that the run's
// New-Order and Payment transactions wait on the server (for 50 s, the
// lock wait timeout, and then again: the error is ignorable), and checks
// that a run still ends: at the end of its window plus grace, and when its
// context is cancelled, the sockets under the statements in flight are
// closed (sqlconn.Link) and Run returns with the locks still held. A run
// that did not cut would wait until the test's own timeout.
func TestStuckStatementsAreCut(t *testing.T) {
	sb := startSandbox(t)
	cfg, db := testDB(t, sb, "tpcc_cut")
	ctx := context.Background()
	o := DefaultOptions()
	o.Scale, o.Tables, o.Threads, o.RandSeed = 1, 1, 2, 3
	if _, err := Prepare(ctx, cfg, o, nil); err != nil {
		t.Fatal(err)
	}
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	for _, q := range []string{"BEGIN", "SELECT COUNT(*) FROM district1 FOR UPDATE", "SELECT COUNT(*) FROM warehouse1 FOR UPDATE"} {
		if _, err := holder.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	defer holder.ExecContext(ctx, "ROLLBACK")
	stuck := func(t *testing.T) {
		t.Helper()
		var n int
		if err := holder.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d transactions waiting for a lock", n)
	}

	t.Run("grace", func(t *testing.T) {
		ro := o
		ro.Time, ro.Grace = 2*time.Second, time.Second
		res, err := Run(ctx, cfg, ro, func(Interval) {})
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		t.Logf("%d events completed", res.Sysbench.Events)
		stuck(t)
	})
	t.Run("interrupt", func(t *testing.T) {
		ro := o
		ro.Time = time.Hour
		rctx, cancel := context.WithCancel(ctx)
		intervals := 0
		res, err := Run(rctx, cfg, ro, func(Interval) {
			if intervals++; intervals == 2 {
				cancel()
			}
		})
		if !errors.Is(err, context.Canceled) || res == nil {
			t.Fatalf("interrupted run: %v, %v", res, err)
		}
		stuck(t)
	})
}
