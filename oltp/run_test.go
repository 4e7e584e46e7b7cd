package oltp

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/engine"
	"benchmatrix/sqlconn"
)

// TestRunBehaviour runs the engine's behaviours that need a server on one
// sandbox, each subtest in its own database.
func TestRunBehaviour(t *testing.T) {
	sb := startSandbox(t)
	ctx := context.Background()

	prepared := func(t *testing.T, db string, workload string, set map[string]string) Options {
		t.Helper()
		cfg, _ := testDB(t, sb, db)
		o := engineOptions(t, workload, map[string]string{"table_size": "1000", "rand_type": "uniform"})
		for k, v := range set {
			if err := o.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := Prepare(ctx, cfg, o, nil); err != nil {
			t.Fatal(err)
		}
		return o
	}

	t.Run("rate_latency_includes_blocked_time", func(t *testing.T) {
		o := prepared(t, "rate", "oltp_point_select", map[string]string{"threads": "2"})
		cfg, db := testDB(t, sb, "rate")
		o.Rate = 100
		o.Time = 4 * time.Second
		// Another session write-locks the table for 2 s: every arrival in
		// that window waits, and its latency counts from its intended start.
		lockDone := make(chan error, 1)
		go func() {
			c, err := db.Conn(ctx)
			if err != nil {
				lockDone <- err
				return
			}
			defer c.Close()
			time.Sleep(500 * time.Millisecond)
			if _, err := c.ExecContext(ctx, "LOCK TABLES sbtest1 WRITE"); err != nil {
				lockDone <- err
				return
			}
			time.Sleep(2 * time.Second)
			_, err = c.ExecContext(ctx, "UNLOCK TABLES")
			lockDone <- err
		}()
		res, err := Run(ctx, cfg, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := <-lockDone; err != nil {
			t.Fatal(err)
		}
		if res.Latency.Max < 1900 {
			t.Fatalf("max latency %.1f ms under a 2 s lock, want ≥ ~2000 (queue time counted)", res.Latency.Max)
		}
		if res.Late == 0 {
			t.Fatalf("no late events although arrivals queued for 2 s: %+v", res)
		}
	})

	t.Run("reinsert_id", func(t *testing.T) {
		for _, mode := range []string{"same", "auto"} {
			o := prepared(t, "reinsert_"+mode, "oltp_write_only", map[string]string{"reinsert_id": mode})
			cfg, db := testDB(t, sb, "reinsert_"+mode)
			o.Events, o.Time = 300, 0
			if _, err := Run(ctx, cfg, o, nil); err != nil {
				t.Fatal(err)
			}
			n := countRows(t, db, "sbtest1")
			var maxID int64
			if err := db.QueryRow("SELECT MAX(id) FROM sbtest1").Scan(&maxID); err != nil {
				t.Fatal(err)
			}
			switch {
			case mode == "same" && (n != 1000 || maxID != 1000):
				t.Errorf("same: %d rows, max(id) %d; want 1000 and 1000", n, maxID)
			case mode == "auto" && (n <= 1000 || maxID <= 1000):
				t.Errorf("auto: %d rows, max(id) %d; want the table to grow", n, maxID)
			}
		}
		o := DefaultOptions()
		o.Workload, o.AutoInc, o.ReinsertID = "oltp_read_write", false, "auto"
		if _, err := Run(ctx, sb.Endpoint(), o, nil); err == nil || !strings.Contains(err.Error(), "auto_inc") {
			t.Fatalf("reinsert_id=auto with auto_inc=off: %v", err)
		}
	})

	t.Run("legacy_counts_and_myisam_locks", func(t *testing.T) {
		for _, engine := range []string{"innodb", "myisam"} {
			o := prepared(t, "legacy_"+engine, "oltp_legacy", map[string]string{"tables": "2", "mysql_storage_engine": engine})
			cfg, db := testDB(t, sb, "legacy_"+engine)
			o.Events, o.Time = 50, 0
			before := globalStatus(t, db)
			res, err := Run(ctx, cfg, o, nil)
			if err != nil {
				t.Fatal(err)
			}
			after := globalStatus(t, db)
			d := func(k string) int64 { return after[k] - before[k] }
			if res.Reads != 14*50 || res.Writes != 4*50 || res.Others != 2*50 {
				t.Errorf("%s: r/w/o %d/%d/%d, want 700/200/100", engine, res.Reads, res.Writes, res.Others)
			}
			if d("Com_select") != 700 || d("Com_stmt_execute") != 0 || d("Com_insert") != 50 || d("Com_delete") != 50 {
				t.Errorf("%s: select %d, stmt_execute %d, insert %d, delete %d", engine,
					d("Com_select"), d("Com_stmt_execute"), d("Com_insert"), d("Com_delete"))
			}
			begin, lock := d("Com_begin"), d("Com_lock_tables")
			if engine == "myisam" && (lock != 50 || begin != 0) || engine == "innodb" && (begin != 50 || lock != 0) {
				t.Errorf("%s: %d BEGIN, %d LOCK TABLES", engine, begin, lock)
			}
		}
	})

	t.Run("warmup_then_measured_window", func(t *testing.T) {
		o := prepared(t, "warm", "oltp_point_select", nil)
		cfg, _ := testDB(t, sb, "warm")
		o.Warmup, o.Time, o.ReportInterval = time.Second, time.Second, 500*time.Millisecond
		var mu sync.Mutex
		var ivs []Interval
		res, err := Run(ctx, cfg, o, func(iv Interval) { mu.Lock(); ivs = append(ivs, iv); mu.Unlock() })
		if err != nil {
			t.Fatal(err)
		}
		var phases []string
		var runEvents int64
		for _, iv := range ivs {
			phases = append(phases, string(iv.Phase))
			if iv.Phase == engine.PhaseRun {
				runEvents += iv.Events
			}
		}
		want := "warmup warmup run run"
		if strings.Join(phases, " ") != want || ivs[2].Start != time.Second || ivs[3].End != 2*time.Second {
			t.Fatalf("intervals %v (%+v), want %s aligned on 0.5 s", phases, ivs, want)
		}
		// The result is the measured window only: events that started in it.
		// Intervals count events by completion, so the two differ by at most
		// one in-flight event per thread at each end of the window.
		if d := res.Events - runEvents; d < -int64(o.Threads) || d > int64(o.Threads) || res.Elapsed < time.Second {
			t.Fatalf("result %d events in %v; run intervals %d", res.Events, res.Elapsed, runEvents)
		}
	})

	t.Run("cancel_returns_partial_result", func(t *testing.T) {
		o := prepared(t, "cancel", "oltp_read_only", map[string]string{"threads": "2"})
		cfg, _ := testDB(t, sb, "cancel")
		o.Time = time.Minute
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		res, err := Run(cctx, cfg, o, nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if res == nil || res.Events == 0 || time.Since(start) > 20*time.Second {
			t.Fatalf("result %+v after %v", res, time.Since(start))
		}
	})

	t.Run("fatal_error_names_statement", func(t *testing.T) {
		cfg, _ := testDB(t, sb, "empty")
		o := engineOptions(t, "oltp_point_select", map[string]string{"db_ps_mode": "disable", "events": "10", "time": "0"})
		_, err := Run(ctx, cfg, o, nil)
		if err == nil || !strings.Contains(err.Error(), "doesn't exist") || !strings.Contains(err.Error(), "SELECT c FROM sbtest1 WHERE id=") {
			t.Fatalf("err = %v, want the server's message and the statement", err)
		}
		o.PSMode = "auto"
		_, err = Run(ctx, cfg, o, nil)
		if err == nil || !strings.Contains(err.Error(), "SELECT c FROM sbtest1 WHERE id=?") {
			t.Fatalf("prepared: err = %v", err)
		}
	})

	t.Run("lost_connection_reconnects", func(t *testing.T) {
		o := prepared(t, "reconn", "oltp_point_select", map[string]string{"mysql_ignore_errors": "all"})
		cfg, db := testDB(t, sb, "reconn")
		o.Time = 3 * time.Second
		go func() {
			time.Sleep(time.Second)
			rows, err := db.Query("SELECT id FROM information_schema.processlist WHERE db = 'reconn' AND id <> CONNECTION_ID()")
			if err != nil {
				return
			}
			var ids []int64
			for rows.Next() {
				var id int64
				if rows.Scan(&id) == nil {
					ids = append(ids, id)
				}
			}
			rows.Close()
			for _, id := range ids {
				db.Exec("KILL ?", id)
			}
		}()
		res, err := Run(ctx, cfg, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Reconnects < 1 || res.Errors < 1 || res.Events == 0 {
			t.Fatalf("reconnects %d errors %d events %d", res.Reconnects, res.Errors, res.Events)
		}
	})
}

func TestIgnorable(t *testing.T) {
	tests := []struct {
		name   string
		ignore string
		err    error
		want   bool
	}{
		{"deadlock default", "1213,1020,1205", mysqlErr(1213), true},
		{"duplicate default", "1213,1020,1205", mysqlErr(1062), false},
		{"all", "all", mysqlErr(1062), true},
		{"lost, not listed", "1213", mysqlErr(2013), false},
		{"lost, listed", "2013", mysqlErr(2013), true},
		{"network loss, listed 2006", "2006", errBadConnForTest, true},
		{"network loss, not listed", "1213", errBadConnForTest, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			if err := o.Set("mysql_ignore_errors", tc.ignore); err != nil {
				t.Fatal(err)
			}
			sh := &shared{o: &o}
			if got := sh.ignorable(&sqlconn.StatementError{Err: tc.err, SQL: "x"}); got != tc.want {
				t.Fatalf("ignorable = %v, want %v", got, tc.want)
			}
		})
	}
}

func mysqlErr(n uint16) error { return &mysql.MySQLError{Number: n, Message: "test"} }

var errBadConnForTest = driver.ErrBadConn
