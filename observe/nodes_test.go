package observe

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"benchmatrix/catalog"
)

// scriptServer answers queries from a table of results that a test
// changes between samples: a fake MySQL for the node sampler.
type scriptServer struct {
	mu      sync.Mutex
	results map[string]*fakeRows // by query prefix
}

func (s *scriptServer) set(prefix string, cols []string, rows ...[]driver.Value) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.results == nil {
		s.results = map[string]*fakeRows{}
	}
	s.results[prefix] = &fakeRows{cols: cols, rows: rows}
}

func (s *scriptServer) Connect(context.Context) (driver.Conn, error) { return scriptConn{s}, nil }
func (s *scriptServer) Driver() driver.Driver                        { return scriptDriver{s} }

type scriptDriver struct{ s *scriptServer }

func (d scriptDriver) Open(string) (driver.Conn, error) { return scriptConn(d), nil }

type scriptConn struct{ s *scriptServer }

func (scriptConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("no prepared statements")
}
func (scriptConn) Close() error              { return nil }
func (scriptConn) Begin() (driver.Tx, error) { return nil, errors.New("no transactions") }

func (c scriptConn) QueryContext(_ context.Context, q string, _ []driver.NamedValue) (driver.Rows, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	for p, r := range c.s.results {
		if strings.HasPrefix(q, p) {
			return &fakeRows{cols: r.cols, rows: append([][]driver.Value(nil), r.rows...)}, nil
		}
	}
	return nil, errors.New("Error 1146 (42S02): Table 'x.nowhere' doesn't exist")
}

func statusRows(kv ...string) [][]driver.Value {
	var out [][]driver.Value
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, []driver.Value{kv[i], []byte(kv[i+1])})
	}
	return out
}

var pairCols = []string{"Variable_name", "Value"}

// Group replication from its documented table: the local member's row
// read as gauges and rates, the flow-control settings by name.
func TestGroupReplicationColumnsFromTheDocumentedTable(t *testing.T) {
	srv := &scriptServer{}
	db := sql.OpenDB(srv)
	defer db.Close()
	grCols := []string{"CHANNEL_NAME", "VIEW_ID", "MEMBER_ID", "COUNT_TRANSACTIONS_IN_QUEUE", "COUNT_TRANSACTIONS_CHECKED",
		"COUNT_CONFLICTS_DETECTED", "COUNT_TRANSACTIONS_ROWS_VALIDATING", "COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE"}
	srv.set("SHOW GLOBAL STATUS", pairCols, statusRows("Com_commit", "10")...)
	srv.set("SELECT * FROM performance_schema.replication_group_member_stats", grCols,
		[]driver.Value{"group_replication_applier", "1:2", "uuid-1", []byte("3"), []byte("1000"), []byte("2"), []byte("3000000"), []byte("7")})
	memberCols := []string{"CHANNEL_NAME", "MEMBER_ID", "MEMBER_HOST", "MEMBER_PORT", "MEMBER_STATE", "MEMBER_ROLE", "MEMBER_VERSION"}
	srv.set("SELECT * FROM performance_schema.replication_group_members", memberCols,
		[]driver.Value{"group_replication_applier", "uuid-1", "127.0.0.1", []byte("4410"), "RECOVERING", "SECONDARY", "8.0.36"})
	src := NodeSource{Index: 1, Name: "node1", Role: catalog.RoleGroup, DB: db}
	s := &NodeSampler{start: time.Now(), nodes: []NodeSource{src}, samples: make([][]nodeSample, 1)}
	ctx := context.Background()
	s.take(ctx, 0)
	srv.set("SELECT * FROM performance_schema.replication_group_member_stats", grCols,
		[]driver.Value{"group_replication_applier", "1:2", "uuid-1", []byte("5"), []byte("1500"), []byte("4"), []byte("12000000"), []byte("9")})
	srv.set("SELECT * FROM performance_schema.replication_group_members", memberCols,
		[]driver.Value{"group_replication_applier", "uuid-1", "127.0.0.1", []byte("4410"), "ONLINE", "PRIMARY", "8.0.36"})
	s.take(ctx, 0)
	s.samples[0][1].t = s.samples[0][0].t + time.Second // exactly one second apart
	rows := nodeRows(s.samples[0], nodeColumnsFor(catalog.RoleGroup, false), nil)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	got := map[string]float64{}
	for j, c := range NodeColumns(src, nil) {
		got[c] = rows[0].Values[j]
	}
	want := map[string]float64{"node1.gr_rows_validating": 12000000, "node1.gr_in_queue": 5, "node1.gr_remote_applier_queue": 9,
		"node1.gr_checked": 500, "node1.gr_conflicts": 2, "node1.gr_online": 1, "node1.gr_primary": 1}
	for k, v := range want {
		if math.Abs(got[k]-v) > 1e-6 {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	srv.set("SHOW GLOBAL VARIABLES LIKE 'group_replication_flow_control%'", pairCols,
		statusRows("group_replication_flow_control_mode", "QUOTA", "group_replication_flow_control_applier_threshold", "25000")...)
	fc, err := GroupFlowControl(ctx, db)
	if err != nil || fc["group_replication_flow_control_mode"] != "QUOTA" || fc["group_replication_flow_control_applier_threshold"] != "25000" {
		t.Fatalf("flow control %v %v", fc, err)
	}
}

func TestGTIDLag(t *testing.T) {
	t.Parallel()
	cases := []struct {
		primary, replica string
		want             float64
	}{
		{"0-1-100", "0-1-90", 10},
		{"0-1-100,1-2-50", "0-1-100,1-2-45", 5},
		{"0-1-100", "", 100},
		{"0-1-100", "0-1-100", 0},
		{"0-1-100", "0-1-120", 0}, // never negative
		{"garbage", "0-1-1", math.NaN()},
	}
	for _, c := range cases {
		got := GTIDLag(c.primary, c.replica)
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("GTIDLag(%q, %q) = %v, want %v", c.primary, c.replica, got, c.want)
		}
	}
}

// A user metric: one number, name/value rows summed, and the refusals.
func TestReadMetric(t *testing.T) {
	srv := &scriptServer{}
	db := sql.OpenDB(srv)
	defer db.Close()
	ctx := context.Background()
	srv.set("SELECT one", []string{"n"}, []driver.Value{[]byte("42")})
	srv.set("SHOW STATUS", pairCols, statusRows("a", "1", "b", "2")...)
	srv.set("SELECT text", []string{"n"}, []driver.Value{[]byte("hello")})
	srv.set("SELECT two rows", []string{"n"}, []driver.Value{[]byte("1")}, []driver.Value{[]byte("2")})
	srv.set("SELECT none", []string{"n"})
	if v, err := readMetric(ctx, db, "SELECT one"); err != nil || v != 42 {
		t.Fatalf("one number: %v %v", v, err)
	}
	if v, err := readMetric(ctx, db, "SHOW STATUS LIKE 'x%'"); err != nil || v != 3 {
		t.Fatalf("name/value rows: %v %v", v, err)
	}
	for q, want := range map[string]string{"SELECT text": "not a number", "SELECT two rows": "more than one row",
		"SELECT none": "no row", "SELECT x FROM nowhere": "doesn't exist"} {
		if _, err := readMetric(ctx, db, q); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", q, err, want)
		}
	}
	// StartNodes refuses a metric the server refuses, with its words.
	_, err := StartNodes(ctx, []NodeSource{{Index: 1, DB: db}}, []NodeMetric{{Name: "bad", SQL: "SELECT x FROM nowhere"}})
	if err == nil || !strings.Contains(err.Error(), "[[observe.metric]] bad on the server") || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("StartNodes: %v", err)
	}
}
