package tpcc

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"benchmatrix/oltp"
	"benchmatrix/sqlconn"

	"github.com/go-sql-driver/mysql"
)

var update = flag.Bool("update", false, "rewrite testdata/schema.golden")

// sessionCounters reads the connection's own Com_* counters.
func sessionCounters(t *testing.T, c *sqlconn.Conn) map[string]int64 {
	t.Helper()
	var rows sqlconn.Rows
	if err := c.QueryRows([]byte("SHOW SESSION STATUS WHERE Variable_name IN ('Com_select','Com_insert','Com_update','Com_delete','Com_begin','Com_commit','Com_rollback')"), &rows); err != nil {
		t.Fatal(err)
	}
	m := map[string]int64{}
	for i := range rows.Len() {
		m[rows.String(i, 0)] = rows.Int(i, 1)
	}
	return m
}

// TestPrepareRunCheck prepares one warehouse on a real sandbox and
// checks what the specification fixes: the tables (SHOW CREATE TABLE
// against testdata/schema.golden, which is sysbench-tpcc's schema as
// MariaDB 10.11 shows it; TestMatchesSysbenchTPCC compares it with the
// real one), the row counts per warehouse, the consistency conditions
// after the load and after a run, the statements of each transaction,
// and the refusals (tables already there, a table set or warehouses
// that do not exist).
func TestPrepareRunCheck(t *testing.T) {
	sb := startSandbox(t)
	cfg, db := testDB(t, sb, "tpcc")
	ctx := context.Background()
	o := DefaultOptions()
	o.Scale, o.Tables, o.Threads, o.RandSeed = 1, 1, 2, 11
	st, err := Prepare(ctx, cfg, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prepared %d rows in %v (%.0f rows/s)", st.TotalRows, st.Elapsed, st.RowsPerSecond())

	// Row counts: the specification's sizes; order lines 5..15 per order,
	// as many as the orders say.
	for kind, want := range o.Rows() {
		if got := count(t, db, "SELECT COUNT(*) FROM "+kind+"1"); got != want {
			t.Errorf("%s1: %d rows, want %d", kind, got, want)
		}
	}
	lines := count(t, db, "SELECT COUNT(*) FROM order_line1")
	if sum := count(t, db, "SELECT SUM(o_ol_cnt) FROM orders1"); lines != sum {
		t.Errorf("order_line1 has %d rows, the orders' o_ol_cnt sum to %d", lines, sum)
	}
	if lines < 5*30000 || lines > 15*30000 {
		t.Errorf("order_line1: %d rows", lines)
	}
	if st.Rows["order_line"] != lines || st.TotalRows != sumRows(o.Rows())+lines {
		t.Errorf("prepare counted %v (total %d)", st.Rows, st.TotalRows)
	}
	// Every last name is in every district (the first 1,000 customers).
	if n := count(t, db, "SELECT COUNT(*) FROM (SELECT c_d_id, COUNT(DISTINCT c_last) n FROM customer1 GROUP BY c_d_id) t WHERE n = 1000"); n != 10 {
		t.Errorf("%d districts hold all 1,000 last names, want 10", n)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM customer1 WHERE c_credit = 'BC'"); n < 2400 || n > 3600 {
		t.Errorf("%d customers with bad credit of 30,000 (10%% expected)", n)
	}

	// The schema.
	var got []string
	for _, k := range tableKinds {
		got = append(got, showCreate(t, db, 1)[k])
	}
	golden := filepath.Join("testdata", "schema.golden")
	text := strings.Join(got, "\n\n") + "\n"
	if *update {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if text != string(want) {
		t.Errorf("SHOW CREATE TABLE differs from %s:\n%s", golden, text)
	}

	check := func(when string) {
		t.Helper()
		res, err := Check(ctx, cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Passed || len(res.Conditions) != 11 {
			t.Errorf("consistency %s: %v (%d conditions)", when, res.Failed(), len(res.Conditions))
		}
	}
	check("after prepare")

	// The check can fail: one warehouse's YTD off by 1.00 breaks
	// conditions 1 and 8, and nothing else.
	if _, err := db.Exec("UPDATE warehouse1 SET w_ytd = w_ytd + 1 WHERE w_id = 1"); err != nil {
		t.Fatal(err)
	}
	if res, err := Check(ctx, cfg, o); err != nil || res.Passed || len(res.Failed()) != 2 ||
		!strings.Contains(res.Failed()[0], "condition 1 ") || !strings.Contains(res.Failed()[1], "condition 8 ") {
		t.Errorf("a broken W_YTD: %v, %v", res, err)
	}
	if _, err := db.Exec("UPDATE warehouse1 SET w_ytd = w_ytd - 1 WHERE w_id = 1"); err != nil {
		t.Fatal(err)
	}

	// Prepare again: refused, nothing touched.
	_, err = Prepare(ctx, cfg, o, nil)
	var ete *ExistingTablesError
	if !errors.As(err, &ete) || len(ete.Tables) != 9 {
		t.Errorf("second prepare: %v", err)
	}

	t.Run("statements per transaction", func(t *testing.T) { statementsPerTransaction(t, ctx, cfg, &o) })
	check("after the statements test")

	// A run: NOPM and TPM from committed transactions; the data stays
	// consistent.
	ro := o
	ro.Time, ro.Threads = 4*time.Second, 3
	var ivs []Interval
	res, err := Run(ctx, cfg, ro, func(iv Interval) { ivs = append(ivs, iv) })
	if err != nil {
		t.Fatal(err)
	}
	sr := res.Sysbench
	var committed, newOrders int64
	for _, ts := range res.Types {
		committed += ts.Committed
		if ts.Type == "new_order" {
			newOrders = ts.Committed
		}
	}
	if sr.Events == 0 || newOrders == 0 || committed+res.Errors[0] != sr.Events {
		t.Errorf("events %d, committed %d, rolled back %d", sr.Events, committed, res.Errors[0])
	}
	if want := float64(newOrders) / sr.Elapsed.Minutes(); res.NOPM != want || res.TPM != float64(committed)/sr.Elapsed.Minutes() {
		t.Errorf("NOPM %.1f (want %.1f), TPM %.1f", res.NOPM, want, res.TPM)
	}
	var ivEvents int64
	for _, iv := range ivs {
		ivEvents += iv.Events
	}
	if ivEvents != sr.Events || len(ivs) < 3 {
		t.Errorf("%d intervals hold %d events, the result %d", len(ivs), ivEvents, sr.Events)
	}
	check("after a run")

	// Bad input at run time.
	bad := o
	bad.Tables = 2
	if _, err := Run(ctx, cfg, bad, nil); err == nil || !strings.Contains(err.Error(), "table set 2 does not exist") {
		t.Errorf("run on a missing table set: %v", err)
	}
	bad = o
	bad.Scale = 3
	if _, err := Run(ctx, cfg, bad, nil); err == nil || !strings.Contains(err.Error(), "has 1 warehouses, the run asks for --scale=3") {
		t.Errorf("run on too few warehouses: %v", err)
	}

	if err := Cleanup(ctx, cfg, o, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'tpcc'"); n != 0 {
		t.Errorf("%d tables left after cleanup", n)
	}
}

func sumRows(m map[string]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// statementsPerTransaction runs each transaction 40 times on one
// connection and checks the server's own statement counters against
// what sysbench-tpcc's Lua sends for it.
func statementsPerTransaction(t *testing.T, ctx context.Context, cfg *mysql.Config, o *Options) {
	cn, err := sqlconn.NewConnector(cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := connect(ctx, cn, &sqlconn.Link{}, o, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nc := newNuConst(newRng(5, 0), -1)
	s := &session{c: c, o: o, g: newRng(5, 1), nc: &nc}
	seen := map[string]map[string]bool{}
	for _, typ := range []Type{NewOrder, Payment, OrderStatus, Delivery, StockLevel} {
		seen[typ.String()] = map[string]bool{}
		for i := range 40 {
			before := sessionCounters(t, c)
			if err := s.run(typ); err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			after := sessionCounters(t, c)
			d := map[string]int64{}
			for k, v := range after {
				d[strings.TrimPrefix(k, "Com_")] = v - before[k]
			}
			sel, ins, upd, del := d["select"], d["insert"], d["update"], d["delete"]
			if d["begin"] != 1 || d["commit"]+d["rollback"] != 1 {
				t.Errorf("%s #%d: begin %d, commit %d, rollback %d", typ, i, d["begin"], d["commit"], d["rollback"])
			}
			ok := true
			switch typ {
			case NewOrder:
				// customer+warehouse, district; per line: item, stock,
				// stock update, order line; one district update, order and
				// new order. A rollback stops at the missing item.
				lines := upd - 1
				if d["rollback"] == 1 {
					ok = s.rolledBack && lines >= 3 && sel == 2+2*lines+1 && ins == 2+lines && del == 0
					seen["new_order"]["rollback"] = true
				} else {
					ok = lines >= minOrderLines && lines <= maxOrderLines && sel == 2+2*lines && ins == 2+lines && del == 0
				}
			case Payment:
				// warehouse, district, customer (+2 by name, +1 bad credit)
				ok = upd == 3 && ins == 1 && del == 0 && sel >= 3 && sel <= 6
				seen["payment"][fmt.Sprint(sel)] = true
			case OrderStatus:
				// customer (count + rows by name), last order, its lines
				ok = upd == 0 && ins == 0 && del == 0 && (sel == 3 || sel == 4)
				seen["order_status"][fmt.Sprint(sel)] = true
			case Delivery:
				// ten districts: oldest new order; for each found: delete,
				// o_c_id, carrier, delivery dates, sum, customer
				k := del
				ok = k <= 10 && sel == 10+2*k && upd == 3*k && ins == 0
			case StockLevel:
				ok = sel == 2 && upd+ins+del == 0
			}
			if !ok {
				t.Errorf("%s #%d: statements %v", typ, i, d)
			}
		}
	}
	// Both ways of finding a customer occurred (60% by name).
	for _, k := range []string{"3", "4"} {
		if !seen["order_status"][k] {
			t.Errorf("order_status never ran %s SELECTs (by id: 3, by name: 4)", k)
		}
	}
	if !slices.ContainsFunc([]string{"5", "6"}, func(k string) bool { return seen["payment"][k] }) {
		t.Errorf("payment never looked a customer up by name: %v", seen["payment"])
	}
	_ = oltp.ExitOK
}

func parseJSONResult(t testing.TB, b []byte) *Result {
	t.Helper()
	var doc struct {
		Result *Result `json:"result"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Result == nil {
		t.Fatalf("JSON report: %v\n%s", err, b)
	}
	return doc.Result
}
