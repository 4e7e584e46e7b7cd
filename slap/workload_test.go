package slap

import (
	"context"
	"strings"
	"testing"
	"time"

	"benchmatrix/engine"
)

// TestWorkloadCountsEveryQuery runs a slap cell as the runner does and
// checks its result against the server's counters: every query is an
// event, read or write as its statement, the intervals add up to the
// result, and no schema is left behind.
func TestWorkloadCountsEveryQuery(t *testing.T) {
	sb, db, _ := startSandbox(t)
	ctx := context.Background()
	for _, load := range []string{LoadRead, LoadUpdate} {
		c := ManifestConfig()
		for k, v := range map[string]string{"load_type": load, "number_of_queries": "200", "iterations": "2", "engine": "innodb"} {
			if err := c.SetKey(k, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Finish(false); err != nil {
			t.Fatal(err)
		}
		o := Options{Workload: Name, Threads: 2, Time: time.Minute, ReportInterval: 100 * time.Millisecond, Config: c}
		before := status(t, db)
		var ivs []engine.Interval
		res, err := Workload{}.Run(ctx, sb.Endpoint(), o, func(iv engine.Interval) { ivs = append(ivs, iv) })
		if err != nil {
			t.Fatal(err)
		}
		d := delta(before, status(t, db))
		// 200 queries / 2 clients = 100 each, 2 iterations.
		if res.Events != 400 || res.Elapsed <= 0 {
			t.Fatalf("%s: %d events in %s, want 400", load, res.Events, res.Elapsed)
		}
		stmt := map[string]string{LoadRead: "Com_select", LoadUpdate: "Com_update"}[load]
		if d[stmt] != 400 {
			t.Errorf("%s: the server counted %s=%d, want 400 (%s)", load, stmt, d[stmt], fmtCounts(d))
		}
		if load == LoadRead && res.Reads != 400 || load == LoadUpdate && res.Writes != 400 {
			t.Errorf("%s: reads %d, writes %d", load, res.Reads, res.Writes)
		}
		var sum int64
		for _, iv := range ivs {
			sum += iv.Events
			if iv.Seconds() <= 0 {
				t.Errorf("%s: interval %+v has no length", load, iv)
			}
		}
		if sum != res.Events {
			t.Errorf("%s: intervals add up to %d events, the result has %d", load, sum, res.Events)
		}
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'mysqlslap'").Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: the mysqlslap schema is left behind (%d, %v)", load, n, err)
		}
	}

	// A schema benchmatrix did not create is never dropped.
	if _, err := db.Exec("CREATE SCHEMA mysqlslap"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE mysqlslap.keep (i int)"); err != nil {
		t.Fatal(err)
	}
	c := ManifestConfig()
	_ = c.Finish(false)
	o := Options{Workload: Name, Threads: 1, Time: 10 * time.Second, Config: c}
	_, err := Workload{}.Run(ctx, sb.Endpoint(), o, nil)
	if err == nil || !strings.Contains(err.Error(), "schema mysqlslap exists already") {
		t.Errorf("ran next to a foreign schema: %v", err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM mysqlslap.keep").Scan(&n); err != nil {
		t.Errorf("the foreign schema was touched: %v", err)
	}
}
