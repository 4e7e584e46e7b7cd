package tpcc

import (
	"context"
	"fmt"
	"io"
	"strings"

	"benchmatrix/sqlconn"

	"github.com/go-sql-driver/mysql"
)

// The consistency conditions of the specification's clause 3.3.2, which
// sysbench-tpcc's tpcc_check.lua also checks (its 1-5, 7-10 and 12; 6 is
// the specification's too). Each query counts the rows (warehouses,
// districts, orders, customers) that violate the condition in one table
// set, over every warehouse at once; %[1]d is the table set.
var conditions = []struct {
	ns    []int    // the conditions the query counts, one column each
	what  []string // what each states
	query string
	// history: the condition reads history, which the purge
	// transaction deletes from (it then cannot hold).
	history []bool
}{
	{[]int{1}, []string{"W_YTD = sum(D_YTD) of the warehouse's districts"},
		`SELECT COUNT(*) FROM warehouse%[1]d w JOIN (SELECT d_w_id, SUM(d_ytd) s FROM district%[1]d GROUP BY d_w_id) d ON d.d_w_id = w.w_id WHERE w.w_ytd <> d.s`, []bool{false}},
	{[]int{2}, []string{"D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) in each district"},
		`SELECT COUNT(*) FROM district%[1]d d
		 LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) m FROM orders%[1]d GROUP BY o_w_id, o_d_id) o ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id
		 LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) m FROM new_orders%[1]d GROUP BY no_w_id, no_d_id) n ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id
		 WHERE o.m IS NULL OR d.d_next_o_id - 1 <> o.m OR (n.m IS NOT NULL AND d.d_next_o_id - 1 <> n.m)`, []bool{false}},
	{[]int{3}, []string{"max(NO_O_ID) - min(NO_O_ID) + 1 = the district's rows in NEW-ORDER"},
		`SELECT COUNT(*) FROM (SELECT MAX(no_o_id) - MIN(no_o_id) + 1 span, COUNT(*) c FROM new_orders%[1]d GROUP BY no_w_id, no_d_id) t WHERE t.span <> t.c`, []bool{false}},
	{[]int{4}, []string{"sum(O_OL_CNT) = the district's rows in ORDER-LINE"},
		`SELECT COUNT(*) FROM (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) s FROM orders%[1]d GROUP BY o_w_id, o_d_id) o
		 LEFT JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) c FROM order_line%[1]d GROUP BY ol_w_id, ol_d_id) l ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
		 WHERE l.c IS NULL OR o.s <> l.c`, []bool{false}},
	{[]int{5}, []string{"O_CARRIER_ID is null exactly for the orders in NEW-ORDER"},
		`SELECT COUNT(*) FROM orders%[1]d o LEFT JOIN new_orders%[1]d n ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id AND n.no_o_id = o.o_id
		 WHERE (o.o_carrier_id IS NULL) <> (n.no_o_id IS NOT NULL)`, []bool{false}},
	// 6 and 7 in one pass over the order lines, grouped by order.
	{[]int{6, 7}, []string{"O_OL_CNT = the order's rows in ORDER-LINE", "OL_DELIVERY_D is null exactly when the order's O_CARRIER_ID is"},
		`SELECT COALESCE(SUM(o.o_ol_cnt <> COALESCE(l.c, 0)), 0),
		        COALESCE(SUM(l.c IS NOT NULL AND ((o.o_carrier_id IS NULL AND l.delivered > 0) OR (o.o_carrier_id IS NOT NULL AND l.delivered < l.c))), 0)
		 FROM orders%[1]d o LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) c, COUNT(ol_delivery_d) delivered FROM order_line%[1]d GROUP BY ol_w_id, ol_d_id, ol_o_id) l
		 ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id`, []bool{false, false}},
	{[]int{8}, []string{"W_YTD = sum(H_AMOUNT) of the warehouse"},
		`SELECT COUNT(*) FROM warehouse%[1]d w LEFT JOIN (SELECT h_w_id, SUM(h_amount) s FROM history%[1]d GROUP BY h_w_id) h ON h.h_w_id = w.w_id
		 WHERE h.s IS NULL OR w.w_ytd <> h.s`, []bool{true}},
	{[]int{9}, []string{"D_YTD = sum(H_AMOUNT) of the district"},
		`SELECT COUNT(*) FROM district%[1]d d LEFT JOIN (SELECT h_w_id, h_d_id, SUM(h_amount) s FROM history%[1]d GROUP BY h_w_id, h_d_id) h
		 ON h.h_w_id = d.d_w_id AND h.h_d_id = d.d_id WHERE h.s IS NULL OR d.d_ytd <> h.s`, []bool{true}},
	// 10 and 12 in one pass over the customers.
	{[]int{10, 12}, []string{"C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) of the customer", "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) of the customer"},
		`SELECT COALESCE(SUM(c.c_balance <> COALESCE(dl.s, 0) - COALESCE(h.s, 0)), 0), COALESCE(SUM(c.c_balance + c.c_ytd_payment <> COALESCE(dl.s, 0)), 0)
		 FROM customer%[1]d c
		 LEFT JOIN (SELECT o.o_w_id w, o.o_d_id d, o.o_c_id cid, SUM(l.ol_amount) s FROM orders%[1]d o JOIN order_line%[1]d l
		            ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id WHERE l.ol_delivery_d IS NOT NULL GROUP BY o.o_w_id, o.o_d_id, o.o_c_id) dl
		   ON dl.w = c.c_w_id AND dl.d = c.c_d_id AND dl.cid = c.c_id
		 LEFT JOIN (SELECT h_c_w_id w, h_c_d_id d, h_c_id cid, SUM(h_amount) s FROM history%[1]d GROUP BY h_c_w_id, h_c_d_id, h_c_id) h
		   ON h.w = c.c_w_id AND h.d = c.c_d_id AND h.cid = c.c_id`, []bool{true, false}},
}

// Condition is one consistency condition's outcome in one table set.
type Condition struct {
	Set        int    `json:"table_set"`
	Number     int    `json:"condition"`
	What       string `json:"what"`
	Violations int64  `json:"violations"`
	Skipped    string `json:"skipped,omitempty"`
}

// CheckResult is the consistency check of the data.
type CheckResult struct {
	Passed     bool        `json:"passed"`
	Conditions []Condition `json:"conditions"`
}

// Failed lists the violated conditions, one line each.
func (r *CheckResult) Failed() []string {
	var out []string
	for _, c := range r.Conditions {
		if c.Violations > 0 {
			out = append(out, fmt.Sprintf("table set %d condition %d (%s): %d violations", c.Set, c.Number, c.What, c.Violations))
		}
	}
	return out
}

// Check runs the consistency conditions on every table set of o (after a
// prepare, or after a run with no transaction in flight). With the purge
// transaction on, the conditions on history are skipped: it deletes
// history rows.
func Check(ctx context.Context, cfg *mysql.Config, o Options) (*CheckResult, error) {
	db, err := sqlconn.OpenDB(cfg, 1)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := checkTables(&o, maxOnDB(ctx, db)); err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// MariaDB splits the per-customer sums into a lateral derived table
	// per customer row (a full district's orders each time: minutes at
	// one warehouse); computed once they take a second. MySQL has no such
	// switch and does not split.
	if _, err := conn.ExecContext(ctx, "SET SESSION optimizer_switch='split_materialized=off'"); err != nil && errno(err) != 1231 {
		return nil, err
	}
	res := &CheckResult{Passed: true}
	for set := 1; set <= o.Tables; set++ {
		for _, c := range conditions {
			q := fmt.Sprintf(c.query, set)
			counts := make([]int64, len(c.ns))
			dst := make([]any, len(c.ns))
			for i := range counts {
				dst[i] = &counts[i]
			}
			if err := conn.QueryRowContext(ctx, q).Scan(dst...); err != nil {
				return nil, fmt.Errorf("consistency condition %v on table set %d: %w", c.ns, set, err)
			}
			for i, n := range c.ns {
				cond := Condition{Set: set, Number: n, What: c.what[i], Violations: counts[i]}
				if c.history[i] && o.EnablePurge {
					cond.Violations = 0
					cond.Skipped = "the purge transaction deletes history rows"
				}
				if cond.Violations > 0 {
					res.Passed = false
				}
				res.Conditions = append(res.Conditions, cond)
			}
		}
	}
	return res, nil
}

func writeCheck(w io.Writer, r *CheckResult) {
	for _, c := range r.Conditions {
		state := "PASSED"
		switch {
		case c.Skipped != "":
			state = "skipped (" + c.Skipped + ")"
		case c.Violations > 0:
			state = fmt.Sprintf("FAILED (%d violations)", c.Violations)
		}
		fmt.Fprintf(w, "Check %d, table set %d: %s: %s\n", c.Number, c.Set, strings.TrimSpace(c.What), state)
	}
}
