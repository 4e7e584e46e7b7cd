package observe

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"benchmatrix/catalog"
	"benchmatrix/server"
)

// causeLoad runs workers connections of single-row UPDATEs on bench.t for
// seconds, calling at(k) at the start of second k (from 1) on its own
// goroutine, and returns the per-second throughput and the sampled rows
// aligned with it.
func causeLoad(t *testing.T, ctx context.Context, sb *server.Sandbox, smp *Sampler, workers, seconds int, at func(k int)) ([]float64, []Row) {
	t.Helper()
	db := openPool(t, sb)
	db.SetMaxOpenConns(workers + 1)
	runCtx, cancel := context.WithTimeout(ctx, time.Duration(seconds)*time.Second)
	defer cancel()
	var mu sync.Mutex
	counts := make([]float64, seconds+2)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := db.Conn(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			for i := w; runCtx.Err() == nil; i += workers {
				if _, err := conn.ExecContext(runCtx, "UPDATE bench.t SET v = v + 1 WHERE id = ?", 1+i%1000); err != nil {
					if runCtx.Err() == nil {
						errs <- err
					}
					return
				}
				if k := int(time.Since(start) / time.Second); k < len(counts) {
					mu.Lock()
					counts[k]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 1; k < seconds; k++ {
			select {
			case <-runCtx.Done():
				return
			case <-time.After(time.Until(start.Add(time.Duration(k) * time.Second))):
			}
			at(k)
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rows := Align(Rates(smp.Stop()), time.Second, seconds)
	return counts[:seconds], rows
}

func causeTable(t *testing.T, db *sql.DB) {
	t.Helper()
	mustExec(t, db, "CREATE DATABASE bench", "CREATE TABLE bench.t (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB")
	var b strings.Builder
	b.WriteString("INSERT INTO bench.t VALUES ")
	for i := 1; i <= 1000; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d, 0)", i)
	}
	mustExec(t, db, b.String())
}

// stallCausesOf detects the stalls of tps and judges each; it fails the
// test when none is found.
func stallCausesOf(t *testing.T, tps []float64, rows []Row, cx CauseContext) []StallCause {
	t.Helper()
	rep := DetectStalls(tps, time.Second, StallOptions{})
	t.Logf("tps %v: %s", roundAll(tps), rep.Text)
	for _, name := range []string{"cpu_server_pct", "redo_kb_s", "threads_running", "row_lock_current_waits", "cg_writes_s", "disk_await_ms"} {
		col := make([]float64, len(rows))
		for i, r := range rows {
			col[i] = r.Get(name)
		}
		t.Logf("%-22s %v", name, roundAll(col))
	}
	if rep.Count == 0 {
		t.Fatalf("no stall detected: %s", rep.Text)
	}
	causes := LikelyCauses(Columns(), rows, rep.Episodes, cx)
	for _, c := range causes {
		t.Log(c.Text())
	}
	return causes
}

// A table lock held by another session (LOCK TABLES ... WRITE, 2 s from
// second 6) stops the load: its stall is put down to a lock, which no row
// lock counter sees, with the server idle and the sessions in statements.
func TestIntegrationStallCauseTableLock(t *testing.T) {
	sb := startSandbox(t, []server.Setting{{Name: "innodb_flush_log_at_trx_commit", Value: "0"}})
	ctx := context.Background()
	admin := openPool(t, sb)
	causeTable(t, admin)
	smp := samplerOn(t, ctx, sb)
	locker := openPool(t, sb)
	conn, err := locker.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tps, rows := causeLoad(t, ctx, sb, smp, 2, 14, func(k int) {
		switch k {
		case 6:
			if _, err := conn.ExecContext(ctx, "LOCK TABLES bench.t WRITE"); err != nil {
				t.Error(err)
			}
		case 8:
			if _, err := conn.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
				t.Error(err)
			}
		}
	})
	causes := stallCausesOf(t, tps, rows, CauseContext{})
	found := false
	for _, c := range causes {
		if c.Start <= 7 && c.End >= 7 {
			found = true
			if !strings.Contains(c.Text(), "likely cause: a lock the row lock counters do not see") {
				t.Errorf("the table lock's stall: %q", c.Text())
			}
		}
	}
	if !found {
		t.Errorf("no stall over second 6-7 (the lock): %+v", causes)
	}
}

// A disk write cap of 20 IOs/s put on the server's cgroup for 4 s from
// second 6 (a commit needs an fsync: innodb_flush_log_at_trx_commit = 1)
// stalls the load: its cause is IO at the cap.
func TestIntegrationStallCauseIOCap(t *testing.T) {
	loose := catalog.LimitSet{DiskWriteIOPS: 100000}
	ctx, sb, _ := limitedSandbox(t, loose, server.Setting{Name: "innodb_flush_log_at_trx_commit", Value: "1"})
	admin := openPool(t, sb)
	causeTable(t, admin)
	smp := samplerOn(t, ctx, sb)
	const capIOPS = 20
	tps, rows := causeLoad(t, ctx, sb, smp, 2, 16, func(k int) {
		lim := loose
		switch k {
		case 6:
			lim = catalog.LimitSet{DiskWriteIOPS: capIOPS}
		case 10:
		default:
			return
		}
		if _, err := sb.SetLimits(ctx, lim); err != nil {
			t.Error(err)
		}
	})
	causes := stallCausesOf(t, tps, rows, CauseContext{WriteIOPS: capIOPS})
	found := false
	for _, c := range causes {
		if c.Start <= 8 && c.End >= 8 {
			found = true
			if !strings.Contains(c.Text(), "likely cause: IO at the cap: the server's write IOs/s at") || strings.Contains(c.Text(), "binds throughout") {
				t.Errorf("the capped seconds' stall: %q (around it the server wrote far more than the cap)", c.Text())
			}
		}
	}
	if !found {
		t.Errorf("no stall over seconds 6-10 (the cap): %+v", causes)
	}
}
