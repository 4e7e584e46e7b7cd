package topology

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"benchmatrix/catalog"
	"benchmatrix/experiment"
	"benchmatrix/oltp"
	"benchmatrix/server"
)

// idStats is what a workload left in one table: its rows and the range of
// its ids, and CHECKSUM TABLE (every column of every row).
type idStats struct {
	Rows, MinID, MaxID, SumID, Checksum int64
}

func (s idStats) String() string {
	return fmt.Sprintf("%d rows, ids %d..%d, sum %d, checksum %d", s.Rows, s.MinID, s.MaxID, s.SumID, s.Checksum)
}

// equalWorkloads are the workloads run on every topology, each in its own
// schema, with one thread and a fixed seed and number of events: the same
// statements in the same order wherever they run.
type equalWorkload struct {
	schema string
	set    func(o *oltp.Options)
	// sameIDs: the ids are the same on every topology; false where the
	// run lets AUTO_INCREMENT assign them (Galera steps them).
	sameIDs bool
}

var equalWorkloads = []equalWorkload{
	// The field report: delete/insert pairs on the loaded ids.
	{"eq_write_only", func(o *oltp.Options) { o.Workload = "oltp_write_only" }, true},
	{"eq_read_write", func(o *oltp.Options) { o.Workload = "oltp_read_write" }, true},
	// Client-chosen ids (sysbench's unique sequence from the seed).
	{"eq_insert_ids", func(o *oltp.Options) { o.Workload, o.AutoInc = "oltp_insert", false }, true},
	// New ids from AUTO_INCREMENT: as many rows, other ids on Galera.
	{"eq_insert_auto", func(o *oltp.Options) { o.Workload = "oltp_insert" }, false},
}

func equalOptions(set func(o *oltp.Options)) oltp.Options {
	o := oltp.DefaultOptions()
	o.Tables, o.TableSize, o.Threads = 2, 12000, 1
	o.RandSeed = 27
	o.Time, o.Events = 0, 1500
	set(&o)
	return o
}

// runEqualWorkloads loads and runs every equal workload through cfg and
// returns, per schema and table, what the workload left there. verify,
// when not nil, checks every node holds the same after each workload.
func runEqualWorkloads(t *testing.T, cfg *mysql.Config, workloads []equalWorkload, verify func(schema string, tables []string)) map[string]idStats {
	t.Helper()
	ctx := context.Background()
	out := map[string]idStats{}
	for _, w := range workloads {
		o := equalOptions(w.set)
		c := cfg.Clone()
		c.DBName = w.schema
		// Loaded by 4 connections at once (each table in parts), run by one.
		load := o
		load.Threads = 4
		if err := oltp.Prepare(ctx, c, load, nil); err != nil {
			t.Fatalf("%s: prepare: %v", w.schema, err)
		}
		res, err := oltp.Run(ctx, c, o, nil)
		if err != nil {
			t.Fatalf("%s: run: %v", w.schema, err)
		}
		if res.Events != o.Events || res.Errors != 0 {
			t.Fatalf("%s: %d events, %d errors: want %d events without an error", w.schema, res.Events, res.Errors, o.Events)
		}
		conn, err := mysql.NewConnector(c)
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(conn)
		tables := []string{"sbtest1", "sbtest2"}
		for _, tb := range tables {
			var s idStats
			if err := db.QueryRow("SELECT COUNT(*), MIN(id), MAX(id), SUM(id) FROM "+tb).Scan(&s.Rows, &s.MinID, &s.MaxID, &s.SumID); err != nil {
				t.Fatalf("%s.%s: %v", w.schema, tb, err)
			}
			var name string
			if err := db.QueryRow("CHECKSUM TABLE "+tb).Scan(&name, &s.Checksum); err != nil {
				t.Fatalf("%s.%s: %v", w.schema, tb, err)
			}
			out[w.schema+"."+tb] = s
		}
		db.Close()
		if verify != nil {
			verify(w.schema, tables)
		}
	}
	return out
}

// The same workload leaves the same data on one server, a primary with
// asynchronous replicas and a 3-node Galera cluster: as many rows, the
// same ids (count, min, max, sum) and the same CHECKSUM TABLE, and every
// node of a cluster holds what its first node does. Before prepare loaded
// explicit ids, Galera's auto_increment_increment (3) loaded ids 1, 4, 7,
// ... and oltp_write_only's delete/insert pairs grew its tables (2,000 to
// about 2,290 rows after 3,000 events, where the others kept 2,000). Where
// the run itself lets AUTO_INCREMENT assign ids (oltp_insert with auto_inc),
// Galera inserts as many rows with other ids: the reason such a comparison
// is refused at plan time (experiment.validateEqualWorkloads).
func TestSameWorkloadSameDataOnEveryTopology(t *testing.T) {
	needServer(t, true)
	ctx := context.Background()

	tmp := t.TempDir()
	sb, err := server.StartSandbox(ctx, server.SandboxConfig{TempDir: tmp, Startup: []server.Setting{{Name: "innodb_buffer_pool_size", Value: "32M"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		left, _ := filepath.Glob(filepath.Join(tmp, server.SandboxDirPrefix+"*"))
		for _, l := range left {
			if !strings.Contains(l, "-golden-") {
				t.Errorf("left behind: %s", l)
			}
		}
	})
	want := runEqualWorkloads(t, sb.Endpoint(), equalWorkloads, nil)
	for _, w := range equalWorkloads {
		s := want[w.schema+".sbtest1"]
		if strings.HasPrefix(w.schema, "eq_insert") {
			continue
		}
		// oltp_write_only and oltp_read_write delete and re-insert the same
		// id: the loaded 1..N stay.
		if s.Rows != 12000 || s.MinID != 1 || s.MaxID != 12000 || s.SumID != 12000*12001/2 {
			t.Errorf("single server %s.sbtest1: %s, want 12000 rows, ids 1..12000", w.schema, s)
		}
	}
	if s := want["eq_insert_ids.sbtest1"]; s.Rows == 0 || s.Rows >= 1500 {
		t.Errorf("single server eq_insert_ids.sbtest1: %s: want some of the 1,500 inserted rows", s)
	}

	for _, top := range []experiment.Topology{
		{Kind: catalog.TopologyReplicas, Replicas: 2},
		{Kind: catalog.TopologyGalera, Nodes: 3},
	} {
		c := startCluster(t, top)
		verify := func(schema string, tables []string) {
			ck, err := c.Verify(ctx, schema, tables, "after the workload", 2*time.Minute)
			if err != nil {
				t.Fatalf("%s %s: %v", top.Kind, schema, err)
			}
			if !ck.Equal {
				t.Errorf("%s %s: the nodes differ: %v", top.Kind, schema, ck.Differences)
			}
		}
		got := runEqualWorkloads(t, c.Endpoint(), equalWorkloads, verify)
		for _, w := range equalWorkloads {
			for _, tb := range []string{"sbtest1", "sbtest2"} {
				key := w.schema + "." + tb
				g, s := got[key], want[key]
				switch {
				case w.sameIDs && g != s:
					t.Errorf("%s %s: %s; one server: %s", top.Kind, key, g, s)
				case !w.sameIDs && g.Rows != s.Rows:
					t.Errorf("%s %s: %d rows; one server: %d", top.Kind, key, g.Rows, s.Rows)
				case !w.sameIDs && top.Kind == catalog.TopologyGalera && g.SumID == s.SumID:
					t.Errorf("%s %s: AUTO_INCREMENT ids equal to one server's (%s): Galera steps them by its size; the plan-time refusal would be needless", top.Kind, key, g)
				}
			}
		}
		t.Logf("%s: %v", top.Kind, got)
		if top.Kind != catalog.TopologyGalera {
			continue
		}
		// The way out the refusal names: wsrep_auto_increment_control =
		// OFF, and every node steps by 1 as one server does.
		for _, n := range c.Nodes() {
			mustExec(t, nodeDB(t, n), "SET GLOBAL wsrep_auto_increment_control = OFF")
		}
		auto := equalWorkloads[len(equalWorkloads)-1]
		auto.schema = "eq_insert_auto_off"
		off := runEqualWorkloads(t, c.Endpoint(), []equalWorkload{auto}, verify)
		for _, tb := range []string{"sbtest1", "sbtest2"} {
			if g, s := off[auto.schema+"."+tb], want["eq_insert_auto."+tb]; g != s {
				t.Errorf("galera, wsrep_auto_increment_control = OFF, %s: %s; one server: %s", tb, g, s)
			}
		}
	}
	t.Logf("single: %v", want)
}
