package oltp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"benchmatrix/engine"
)

func TestInsertRunGrowsTable(t *testing.T) {
	sb := startSandbox(t)
	cfg, db := testDB(t, sb, "sbtest")
	ctx := context.Background()

	o := DefaultOptions()
	o.Workload = "oltp_insert"
	o.Tables = 2
	o.TableSize = 1000
	o.Threads = 2
	var log bytes.Buffer
	if err := Prepare(ctx, cfg, o, &log); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Creating table 'sbtest1'...", "Inserting 1000 records into 'sbtest2'", "Creating a secondary index on 'sbtest1'..."} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("prepare log lacks %q:\n%s", want, log.String())
		}
	}
	// A second prepare refuses to overwrite.
	err := Prepare(ctx, cfg, o, nil)
	var ex *ExistingTablesError
	if !errors.As(err, &ex) || !strings.Contains(err.Error(), "sbtest1") {
		t.Fatalf("second prepare: %v, want ExistingTablesError naming sbtest1", err)
	}
	before := countRows(t, db, "sbtest1") + countRows(t, db, "sbtest2")
	if before != 2000 {
		t.Fatalf("rows after prepare = %d, want 2000", before)
	}

	o.Threads = 1
	o.Time = 2 * time.Second
	o.ReportInterval = time.Second
	var mu sync.Mutex
	var ivs []Interval
	res, err := Run(ctx, cfg, o, func(iv Interval) { mu.Lock(); ivs = append(ivs, iv); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	if res.Events <= 0 || res.Writes != res.Events {
		t.Fatalf("events %d writes %d: want positive and equal", res.Events, res.Writes)
	}
	if len(ivs) == 0 || ivs[0].Phase != engine.PhaseRun || ivs[0].End != time.Second || ivs[0].Events <= 0 {
		t.Fatalf("intervals = %+v", ivs)
	}
	after := countRows(t, db, "sbtest1") + countRows(t, db, "sbtest2")
	if after-before != res.Events {
		t.Fatalf("table grew by %d rows, events = %d", after-before, res.Events)
	}
	if res.Latency.Min <= 0 || res.Latency.Max < res.Latency.Min || res.Latency.P95 <= 0 {
		t.Fatalf("latency = %+v", res.Latency)
	}
	if res.Fairness.EventsAvg != float64(res.Events) {
		t.Fatalf("fairness = %+v, events %d", res.Fairness, res.Events)
	}

	if err := Cleanup(ctx, cfg, o, nil); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='sbtest'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("after cleanup %d tables (%v)", n, err)
	}
}

// The rows of a seed do not depend on how many connections loaded them,
// though more threads than tables split each table's ids between them.
func TestPrepareSameDataWhateverThreads(t *testing.T) {
	sb := startSandbox(t)
	cfg, db := testDB(t, sb, "sbtest")
	ctx := context.Background()
	o := DefaultOptions()
	o.Tables, o.TableSize, o.RandSeed = 2, 23000, 7
	checksums := func() string {
		var out []string
		for _, tbl := range []string{"sbtest1", "sbtest2"} {
			var name string
			var sum int64
			if err := db.QueryRow("CHECKSUM TABLE "+tbl).Scan(&name, &sum); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(sum))
		}
		return strings.Join(out, " ")
	}
	var first string
	for i, threads := range []int{1, 2, 5, 3} {
		o.Threads = threads
		if i == 3 {
			// The INSERT path, for servers that refuse LOCAL INFILE.
			if _, err := db.Exec("SET GLOBAL local_infile = OFF"); err != nil {
				t.Fatal(err)
			}
			defer db.Exec("SET GLOBAL local_infile = ON")
		}
		var log bytes.Buffer
		before := globalStatus(t, db)
		if err := Prepare(ctx, cfg, o, &log); err != nil {
			t.Fatal(err)
		}
		after := globalStatus(t, db)
		if inserts := after["Com_insert"] - before["Com_insert"]; (i == 3) != (inserts > 0) {
			t.Errorf("threads=%d: %d INSERT statements", threads, inserts)
		}
		if n := countRows(t, db, "sbtest2"); n != 23000 {
			t.Fatalf("threads=%d: sbtest2 has %d rows", threads, n)
		}
		// Each table is announced once and indexed once.
		for _, line := range []string{"Creating table 'sbtest1'...", "Inserting 23000 records into 'sbtest1'", "Creating a secondary index on 'sbtest1'..."} {
			if c := strings.Count(log.String(), line); c != 1 {
				t.Errorf("threads=%d: %q printed %d times:\n%s", threads, line, c, log.String())
			}
		}
		sum := checksums()
		if first == "" {
			first = sum
		} else if sum != first {
			t.Errorf("threads=%d: checksums %s, with 1 thread %s", threads, sum, first)
		}
		if err := Cleanup(ctx, cfg, o, nil); err != nil {
			t.Fatal(err)
		}
	}
	o.RandSeed = 8
	o.Threads = 2
	if err := Prepare(ctx, cfg, o, nil); err != nil {
		t.Fatal(err)
	}
	if checksums() == first {
		t.Errorf("another seed gave the same rows")
	}
}
