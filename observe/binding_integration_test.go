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
	"benchmatrix/record/parts"
	"benchmatrix/server"
)

// bindingOf samples the server's cgroup while load runs for d, and judges
// the limits in force on the sampled rows as the runner does
// (analysis.Observe -> parts.AssessBinding).
func bindingOf(t *testing.T, ctx context.Context, sb *server.Sandbox, lim catalog.LimitSet, d time.Duration, load func(ctx context.Context) error) parts.Binding {
	t.Helper()
	if _, err := sb.SetLimits(ctx, lim); err != nil {
		t.Fatal(err)
	}
	paths, ok := sb.Cgroup()
	if !ok {
		t.Fatalf("a limited sandbox has no cgroup: %+v", paths)
	}
	s := samplerOn(t, ctx, sb)
	lctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	lerr := load(lctx)
	rows := Rates(s.Stop())
	if lerr != nil && lctx.Err() == nil {
		t.Fatal(lerr)
	}
	// The first interval began before the load: judge the others.
	if len(rows) > 1 {
		rows = rows[1:]
	}
	col := func(name string) []float64 {
		out := make([]float64, len(rows))
		for i, r := range rows {
			out[i] = r.Get(name)
		}
		return out
	}
	b := parts.AssessBinding(lim, parts.BindingSeries{
		ThrottledPeriods: col("cg_cpu_throttled_periods_s"), ThrottledMs: col("cg_cpu_throttled_ms_s"),
		Reads: col("cg_reads_s"), Writes: col("cg_writes_s"), ReadKB: col("cg_read_kb_s"), WriteKB: col("cg_write_kb_s"),
		MemoryMB: col("cg_memory_mb"), MemoryLimitHits: col("cg_memory_limit_hits_s"), ServerCPUPct: col("cpu_server_pct"),
	})
	for _, l := range b.Limits {
		t.Logf("%s (bound %v)", l.Text, l.Bound)
	}
	return b
}

// parallel runs f on n connections until ctx ends; the first error other
// than the end of ctx is returned.
func parallel(ctx context.Context, db *sql.DB, n int, f func(ctx context.Context, conn *sql.Conn, i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			conn, err := db.Conn(context.Background())
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			for i := 0; ctx.Err() == nil; i++ {
				if err := f(ctx, conn, w*1_000_000+i); err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func boundOf(t *testing.T, b parts.Binding, key string) parts.LimitBinding {
	t.Helper()
	for _, l := range b.Limits {
		if l.Key == key {
			if !l.Measured {
				t.Fatalf("%s not measured: %s", key, l.Text)
			}
			return l
		}
	}
	t.Fatalf("%s not judged: %+v", key, b.Limits)
	return parts.LimitBinding{}
}

// Conditions that bind, on a real sandbox in its own cgroup: a quota of 8
// CPUs on this machine (fewer cores than that) and a disk read cap under a
// read-only load whose data sits in the buffer pool never bind; a 0.2-CPU
// quota under the same reads and a 50 write IOPS cap under commit-per-insert
// do.
func TestBindingRealSandbox(t *testing.T) {
	ctx, sb, _ := limitedSandbox(t, catalog.LimitSet{CPUs: 8, DiskReadIOPS: 200, DiskWriteIOPS: 50},
		server.Setting{Name: "innodb_flush_log_at_trx_commit", Value: "1"}, server.Setting{Name: "innodb_buffer_pool_size", Value: "134217728"})
	db := openPool(t, sb)
	mustExec(t, db, "CREATE DATABASE bind", "CREATE TABLE bind.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT, pad CHAR(100)) ENGINE=InnoDB",
		"INSERT INTO bind.t (v, pad) SELECT seq, 'x' FROM bind.seq_1_to_20000", "CREATE TABLE bind.w (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB")
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM bind.t WHERE pad <> ''").Scan(&n); err != nil || n != 20000 {
		t.Fatalf("warming the buffer pool: %d rows, %v", n, err)
	}
	reads := func(ctx context.Context) error {
		return parallel(ctx, db, 2, func(ctx context.Context, c *sql.Conn, i int) error {
			var v int
			return c.QueryRowContext(ctx, fmt.Sprintf("SELECT v FROM bind.t WHERE id = %d", 1+i%20000)).Scan(&v)
		})
	}

	t.Run("not binding", func(t *testing.T) {
		b := bindingOf(t, ctx, sb, catalog.LimitSet{CPUs: 8, DiskReadIOPS: 200}, 5*time.Second, reads)
		if l := boundOf(t, b, "cpus"); l.Bound || l.Seconds < 3 {
			t.Errorf("cpus = 8 on this machine bound: %s", l.Text)
		}
		if l := boundOf(t, b, "disk_read_iops"); l.Bound || l.Seconds < 3 {
			t.Errorf("a read cap under reads from the buffer pool bound: %s", l.Text)
		}
		if got := strings.Join((&b).Unbound(), " "); got != "cpus disk_read_iops" {
			t.Errorf("unbound %q", got)
		}
	})
	t.Run("quota binds", func(t *testing.T) {
		b := bindingOf(t, ctx, sb, catalog.LimitSet{CPUs: 0.2}, 5*time.Second, reads)
		if l := boundOf(t, b, "cpus"); !l.Bound {
			t.Errorf("cpus = 0.2 under two busy readers did not bind: %s", l.Text)
		}
	})
	t.Run("write cap binds", func(t *testing.T) {
		b := bindingOf(t, ctx, sb, catalog.LimitSet{DiskWriteIOPS: 50}, 5*time.Second, func(ctx context.Context) error {
			return parallel(ctx, db, 2, func(ctx context.Context, c *sql.Conn, i int) error {
				_, err := c.ExecContext(ctx, "INSERT INTO bind.w (v) VALUES (1)")
				return err
			})
		})
		if l := boundOf(t, b, "disk_write_iops"); !l.Bound {
			t.Errorf("disk_write_iops = 50 under commit-per-insert did not bind: %s", l.Text)
		}
	})
}
