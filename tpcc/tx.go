package tpcc

import (
	"errors"
	"fmt"
	"math"
	"time"

	"benchmatrix/sqlconn"
)

// Type is a transaction type of the mix.
type Type int

// The five TPC-C transactions, and sysbench-tpcc's optional purge.
const (
	NewOrder Type = iota
	Payment
	OrderStatus
	Delivery
	StockLevel
	Purge
	numTypes
)

var typeNames = [numTypes]string{"new_order", "payment", "order_status", "delivery", "stock_level", "purge"}

func (t Type) String() string { return typeNames[t] }

// Types lists the transaction types in order.
func Types() []Type { return []Type{NewOrder, Payment, OrderStatus, Delivery, StockLevel, Purge} }

// pick draws the transaction type as sysbench-tpcc's event() does:
// uniform(1, 23) (24 with the purge): 1-10 New-Order, 11-20 Payment, 21
// Order-Status, 22 Delivery, 23 Stock-Level, 24 purge (10/23 = 43.5%,
// 10/23, 1/23 = 4.35% each: the specification's minimum mix is 43% /
// 4% / 4% / 4% for the last four).
func pick(g *rng, purge bool, mix []int) Type {
	if len(mix) > 0 {
		sum := 0
		for _, w := range mix {
			sum += w
		}
		v := g.uniform(1, sum)
		for i, w := range mix {
			if v <= w {
				return Type(i)
			}
			v -= w
		}
	}
	n := 23
	if purge {
		n = 24
	}
	switch v := g.uniform(1, n); {
	case v <= 10:
		return NewOrder
	case v <= 20:
		return Payment
	case v == 21:
		return OrderStatus
	case v == 22:
		return Delivery
	case v == 23:
		return StockLevel
	default:
		return Purge
	}
}

// session is one worker's connection and draws. Statements are text
// queries with literals, as sysbench-tpcc sends them (con:query), built
// into q (sqltext.go); the connection counts each as sysbench's driver
// counts it: a result set is a read, a statement that changed rows a
// write, anything else other.
type session struct {
	c  *sqlconn.Conn
	o  *Options
	g  *rng
	nc *nuConst

	q       []byte          // the statement being sent
	scratch []byte          // a value built for it
	rows    [4]sqlconn.Rows // result sets the transactions keep at once
	// rolledBack: the last New-Order was the 1% that rolls back (an
	// unused item number), counted by sysbench-tpcc as an error.
	rolledBack bool
}

// errNoRow is a statement that returned no row where one was needed.
var errNoRow = errors.New("no row")

// query sends the statement format with args and reads its rows into
// s.rows[into].
func (s *session) query(into int, format string, args ...arg) (*sqlconn.Rows, error) {
	s.q = appendSQL(s.q[:0], format, args...)
	r := &s.rows[into]
	if err := s.c.QueryRows(s.q, r); err != nil {
		return nil, err
	}
	return r, nil
}

// one is query when a row must come back: an error naming the statement
// when none does.
func (s *session) one(into int, format string, args ...arg) (*sqlconn.Rows, error) {
	r, err := s.query(into, format, args...)
	if err != nil {
		return nil, err
	}
	if r.Len() == 0 {
		return nil, &sqlconn.StatementError{Err: errNoRow, SQL: string(s.q)}
	}
	return r, nil
}

func (s *session) exec(format string, args ...arg) error {
	s.q = appendSQL(s.q[:0], format, args...)
	return s.c.Exec(s.q)
}

func (s *session) begin(readOnly bool) error {
	switch {
	case !s.o.Splittable:
		return s.exec("BEGIN")
	case readOnly:
		return s.exec("START TRANSACTION READ ONLY")
	default:
		return s.exec("START TRANSACTION READ WRITE")
	}
}

// otherWare draws a warehouse other than home (clause 2.4.1.5, 2.5.1.2);
// with one warehouse, home. (sysbench-tpcc's other_ware loops until it
// draws home itself, so its "remote" warehouse is always the home one.)
func (s *session) otherWare(home int) int {
	if s.o.Scale == 1 {
		return home
	}
	for {
		if w := s.g.uniform(1, s.o.Scale); w != home {
			return w
		}
	}
}

func (s *session) run(t Type) error {
	s.rolledBack = false
	switch t {
	case NewOrder:
		return s.newOrder()
	case Payment:
		return s.payment()
	case OrderStatus:
		return s.orderStatus()
	case Delivery:
		return s.delivery()
	case StockLevel:
		return s.stockLevel()
	default:
		return s.purge()
	}
}

// newOrder is the New-Order transaction (clause 2.4) with sysbench-tpcc's
// statements: 5..15 lines, 1% of them with an unused item number on the
// line before the last (sysbench-tpcc's place for it), which finds no
// item and rolls back.
func (s *session) newOrder() error {
	t := s.g.uniform(1, s.o.Tables)
	w := s.g.uniform(1, s.o.Scale)
	d := s.g.uniform(1, DistPerWare)
	c := s.g.nurand(s.nc, 1023, 1, CustPerDist)
	olCnt := s.g.uniform(minOrderLines, maxOrderLines)
	rbk := s.g.uniform(1, 100)
	var item, supply, qty [maxOrderLines + 1]int
	allLocal := 1
	for i := 1; i <= olCnt; i++ {
		item[i] = s.g.nurand(s.nc, 8191, 1, MaxItems)
		if i == olCnt-1 && rbk == 1 {
			item[i] = -1
		}
		if s.g.uniform(1, 100) != 1 {
			supply[i] = w
		} else {
			supply[i] = s.otherWare(w)
			allLocal = 0
		}
		qty[i] = s.g.uniform(1, 10)
	}
	if err := s.begin(false); err != nil {
		return err
	}
	cw, err := s.one(0, "SELECT c_discount, c_last, c_credit, w_tax FROM customer%d, warehouse%d WHERE w_id = %d AND c_w_id = w_id AND c_d_id = %d AND c_id = %d", num(t), num(t), num(w), num(d), num(c))
	if err != nil {
		return err
	}
	dist, err := s.one(1, "SELECT d_next_o_id, d_tax FROM district%d WHERE d_w_id = %d AND d_id = %d FOR UPDATE", num(t), num(w), num(d))
	if err != nil {
		return err
	}
	oID := int(dist.Int(0, 0))
	discount, wTax, dTax := cw.Float(0, 0), cw.Float(0, 3), dist.Float(0, 1)
	if err := s.exec("UPDATE district%d SET d_next_o_id = %d WHERE d_id = %d AND d_w_id= %d", num(t), num(oID+1), num(d), num(w)); err != nil {
		return err
	}
	if err := s.exec("INSERT INTO orders%d (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (%d,%d,%d,%d,NOW(),%d,%d)",
		num(t), num(oID), num(d), num(w), num(c), num(olCnt), num(allLocal)); err != nil {
		return err
	}
	if err := s.exec("INSERT INTO new_orders%d (no_o_id, no_d_id, no_w_id) VALUES (%d,%d,%d)", num(t), num(oID), num(d), num(w)); err != nil {
		return err
	}
	for n := 1; n <= olCnt; n++ {
		it, err := s.query(2, "SELECT i_price, i_name, i_data FROM item%d WHERE i_id = %d", num(t), num(item[n]))
		if err != nil {
			return err
		}
		if it.Len() == 0 {
			s.rolledBack = true
			return s.exec("ROLLBACK")
		}
		st, err := s.one(3, "SELECT s_quantity, s_data, s_dist_%02d s_dist FROM stock%d WHERE s_i_id = %d AND s_w_id= %d FOR UPDATE", num(d), num(t), num(item[n]), num(supply[n]))
		if err != nil {
			return err
		}
		sq := int(st.Int(0, 0))
		if sq > qty[n] {
			sq -= qty[n]
		} else {
			sq = sq - qty[n] + 91
		}
		// The stock row's s_dist stays in rows[3]; the UPDATE does not
		// read into it.
		if err := s.exec("UPDATE stock%d SET s_quantity = %d WHERE s_i_id = %d AND s_w_id= %d", num(t), num(sq), num(item[n]), num(supply[n])); err != nil {
			return err
		}
		amount := float64(qty[n]) * it.Float(0, 0) * (1 + wTax + dTax) * (1 - discount)
		// sysbench-tpcc formats the amount with %d: LuaJIT truncates it.
		if err := s.exec("INSERT INTO order_line%d (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (%d,%d,%d,%d,%d,%d,%d,%d,'%s')",
			num(t), num(oID), num(d), num(w), num(n), num(item[n]), num(supply[n]), num(qty[n]), arg{kind: 'd', i: int64(math.Trunc(amount))}, textBytes(st.Bytes(0, 2))); err != nil {
			return err
		}
	}
	return s.exec("COMMIT")
}

// customerByName finds the customer at position ceil(n/2) of those with
// the last name in the district, ordered by first name (clause 2.5.2.2),
// with sysbench-tpcc's two statements (a count, then the rows); cols are
// the columns the second one reads. It returns the rows (in s.rows[2])
// and the customer's row number.
func (s *session) customerByName(t, w, d int, last, cols string) (*sqlconn.Rows, int, error) {
	if _, err := s.one(2, "SELECT count(c_id) namecnt FROM customer%d WHERE c_w_id = %d AND c_d_id= %d AND c_last='%s'", num(t), num(w), num(d), text(last)); err != nil {
		return nil, 0, err
	}
	rows, err := s.query(2, "SELECT %s FROM customer%d WHERE c_w_id = %d AND c_d_id= %d AND c_last='%s' ORDER BY c_first", text(cols), num(t), num(w), num(d), text(last))
	if err != nil {
		return nil, 0, err
	}
	if rows.Len() == 0 {
		// Every last name is in every district (the first 1,000
		// customers take each once), unless the data is not TPC-C's.
		return nil, 0, fmt.Errorf("no customer named %s in warehouse %d district %d of table set %d", last, w, d, t)
	}
	return rows, (rows.Len()+1)/2 - 1, nil
}

// payment is the Payment transaction (clause 2.5): 60% of customers by
// last name, 15% in a remote warehouse.
func (s *session) payment() error {
	t := s.g.uniform(1, s.o.Tables)
	w := s.g.uniform(1, s.o.Scale)
	d := s.g.uniform(1, DistPerWare)
	c := s.g.nurand(s.nc, 1023, 1, CustPerDist)
	amount := s.g.uniform(1, 5000)
	last := lastName(s.g.nurand(s.nc, 255, 0, lastNameSpan-1))
	byName := s.g.uniform(1, 100) <= 60
	cw, cd := w, d
	if s.g.uniform(1, 100) > 85 {
		cw = s.otherWare(w)
		cd = s.g.uniform(1, DistPerWare)
	}
	if err := s.begin(false); err != nil {
		return err
	}
	if err := s.exec("UPDATE warehouse%d SET w_ytd = w_ytd + %d WHERE w_id = %d", num(t), num(amount), num(w)); err != nil {
		return err
	}
	wh, err := s.one(0, "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse%d WHERE w_id = %d", num(t), num(w))
	if err != nil {
		return err
	}
	if err := s.exec("UPDATE district%d SET d_ytd = d_ytd + %d WHERE d_w_id = %d AND d_id= %d", num(t), num(amount), num(w), num(d)); err != nil {
		return err
	}
	dist, err := s.one(1, "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district%d WHERE d_w_id = %d AND d_id = %d", num(t), num(w), num(d))
	if err != nil {
		return err
	}
	if byName {
		rows, i, err := s.customerByName(t, cw, cd, last, "c_id")
		if err != nil {
			return err
		}
		c = int(rows.Int(i, 0))
	}
	cust, err := s.one(2, "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_since FROM customer%d WHERE c_w_id = %d AND c_d_id= %d AND c_id=%d FOR UPDATE", num(t), num(cw), num(cd), num(c))
	if err != nil {
		return err
	}
	balance := cust.Float(0, 12) - float64(amount)
	ytd := cust.Float(0, 13) + float64(amount)
	if string(cust.Bytes(0, 9)) == "BC" {
		data, err := s.one(3, "SELECT c_data FROM customer%d WHERE c_w_id = %d AND c_d_id=%d AND c_id= %d", num(t), num(cw), num(cd), num(c))
		if err != nil {
			return err
		}
		nd := fmt.Sprintf("| %4d %2d %4d %2d %4d $%7.2f %12d %24s", c, cd, cw, d, w, float64(amount), time.Now().Unix(), data.Bytes(0, 0))
		if len(nd) > 500 {
			nd = nd[:500]
		}
		if err := s.exec("UPDATE customer%d SET c_balance=%f, c_ytd_payment=%f, c_data=%s WHERE c_w_id = %d AND c_d_id=%d AND c_id=%d",
			num(t), flt(balance), flt(ytd), quoted([]byte(nd)), num(cw), num(cd), num(c)); err != nil {
			return err
		}
	} else if err := s.exec("UPDATE customer%d SET c_balance=%f, c_ytd_payment=%f WHERE c_w_id = %d AND c_d_id=%d AND c_id=%d",
		num(t), flt(balance), flt(ytd), num(cw), num(cd), num(c)); err != nil {
		return err
	}
	// h_data: "%10s %10s   " of the warehouse's and district's names.
	s.scratch = appendPadded(s.scratch[:0], wh.Bytes(0, 5), 10)
	s.scratch = append(s.scratch, ' ')
	s.scratch = append(appendPadded(s.scratch, dist.Bytes(0, 5), 10), "   "...)
	if err := s.exec("INSERT INTO history%d (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (%d,%d,%d,%d,%d,NOW(),%d,%s)",
		num(t), num(cd), num(cw), num(c), num(d), num(w), num(amount), quoted(s.scratch)); err != nil {
		return err
	}
	return s.exec("COMMIT")
}

// orderStatus is the Order-Status transaction (clause 2.6): the
// customer (60% by last name), their last order and its lines.
// (sysbench-tpcc reads the lines of order number d_id, a slip in its
// format arguments; here the customer's last order's, as the
// specification says: the same statement, 5..15 rows either way.)
func (s *session) orderStatus() error {
	t := s.g.uniform(1, s.o.Tables)
	w := s.g.uniform(1, s.o.Scale)
	d := s.g.uniform(1, DistPerWare)
	c := s.g.nurand(s.nc, 1023, 1, CustPerDist)
	last := lastName(s.g.nurand(s.nc, 255, 0, lastNameSpan-1))
	byName := s.g.uniform(1, 100) <= 60
	if err := s.begin(true); err != nil {
		return err
	}
	if byName {
		rows, i, err := s.customerByName(t, w, d, last, "c_balance, c_first, c_middle, c_id")
		if err != nil {
			return err
		}
		c = int(rows.Int(i, 3))
	} else if _, err := s.one(0, "SELECT c_balance, c_first, c_middle, c_last FROM customer%d WHERE c_w_id = %d AND c_d_id=%d AND c_id=%d", num(t), num(w), num(d), num(c)); err != nil {
		return err
	}
	ord, err := s.one(0, "SELECT o_id, o_carrier_id, o_entry_d FROM orders%d WHERE o_w_id = %d AND o_d_id = %d AND o_c_id = %d ORDER BY o_id DESC", num(t), num(w), num(d), num(c))
	if err != nil {
		return err
	}
	if _, err := s.query(1, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line%d WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d", num(t), num(w), num(d), num(int(ord.Int(0, 0)))); err != nil {
		return err
	}
	return s.exec("COMMIT")
}

// delivery is the Delivery transaction (clause 2.7), in one database
// transaction for the ten districts as sysbench-tpcc runs it.
func (s *session) delivery() error {
	t := s.g.uniform(1, s.o.Tables)
	w := s.g.uniform(1, s.o.Scale)
	carrier := s.g.uniform(1, 10)
	if err := s.begin(false); err != nil {
		return err
	}
	for d := 1; d <= DistPerWare; d++ {
		no, err := s.query(0, "SELECT no_o_id FROM new_orders%d WHERE no_d_id = %d AND no_w_id = %d ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE", num(t), num(d), num(w))
		if err != nil {
			return err
		}
		if no.Len() == 0 || no.Null(0, 0) {
			continue
		}
		o := int(no.Int(0, 0))
		if err := s.exec("DELETE FROM new_orders%d WHERE no_o_id = %d AND no_d_id = %d AND no_w_id = %d", num(t), num(o), num(d), num(w)); err != nil {
			return err
		}
		oc, err := s.one(1, "SELECT o_c_id FROM orders%d WHERE o_id = %d AND o_d_id = %d AND o_w_id = %d", num(t), num(o), num(d), num(w))
		if err != nil {
			return err
		}
		if err := s.exec("UPDATE orders%d SET o_carrier_id = %d WHERE o_id = %d AND o_d_id = %d AND o_w_id = %d", num(t), num(carrier), num(o), num(d), num(w)); err != nil {
			return err
		}
		if err := s.exec("UPDATE order_line%d SET ol_delivery_d = NOW() WHERE ol_o_id = %d AND ol_d_id = %d AND ol_w_id = %d", num(t), num(o), num(d), num(w)); err != nil {
			return err
		}
		sum, err := s.one(2, "SELECT SUM(ol_amount) sm FROM order_line%d WHERE ol_o_id = %d AND ol_d_id = %d AND ol_w_id = %d", num(t), num(o), num(d), num(w))
		if err != nil {
			return err
		}
		if err := s.exec("UPDATE customer%d SET c_balance = c_balance + %f, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = %d AND c_d_id = %d AND c_w_id = %d",
			num(t), flt(sum.Float(0, 0)), num(int(oc.Int(0, 0))), num(d), num(w)); err != nil {
			return err
		}
	}
	return s.exec("COMMIT")
}

// stockLevel is the Stock-Level transaction (clause 2.8): distinct items
// of the district's last 20 orders with stock under a threshold of
// 10..20, in sysbench-tpcc's one join.
func (s *session) stockLevel() error {
	t := s.g.uniform(1, s.o.Tables)
	w := s.g.uniform(1, s.o.Scale)
	d := s.g.uniform(1, DistPerWare)
	level := s.g.uniform(10, 20)
	if err := s.begin(true); err != nil {
		return err
	}
	dist, err := s.one(0, "SELECT d_next_o_id FROM district%d WHERE d_id = %d AND d_w_id= %d", num(t), num(d), num(w))
	if err != nil {
		return err
	}
	next := int(dist.Int(0, 0))
	if _, err := s.query(1, "SELECT COUNT(DISTINCT (s_i_id)) FROM order_line%d, stock%d WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id < %d AND ol_o_id >= %d AND s_w_id= %d AND s_i_id=ol_i_id AND s_quantity < %d",
		num(t), num(t), num(w), num(d), num(next), num(next-20), num(w), num(level)); err != nil {
		return err
	}
	return s.exec("COMMIT")
}

// purge is sysbench-tpcc's optional purge (--enable_purge=yes; not a
// TPC-C transaction): ten times, in its own transaction, delete one
// delivered order of a customer with more than one (and its lines) and
// ten history rows of a district, to keep the data from growing.
func (s *session) purge() error {
	for range 10 {
		t := s.g.uniform(1, s.o.Tables)
		w := s.g.uniform(1, s.o.Scale)
		d := s.g.uniform(1, DistPerWare)
		if err := s.begin(false); err != nil {
			return err
		}
		mo, err := s.one(0, "SELECT min(no_o_id) mo FROM new_orders%d WHERE no_w_id = %d AND no_d_id = %d", num(t), num(w), num(d))
		if err != nil {
			return err
		}
		if !mo.Null(0, 0) {
			del, err := s.query(1, "SELECT o_id FROM orders%d o, (SELECT o_c_id,o_w_id,o_d_id,count(distinct o_id) FROM orders%d WHERE o_w_id=%d AND o_d_id=%d AND o_id > 2100 AND o_id < %d GROUP BY o_c_id,o_d_id,o_w_id having count( distinct o_id) > 1 limit 1) t WHERE t.o_w_id=o.o_w_id and t.o_d_id=o.o_d_id and t.o_c_id=o.o_c_id limit 1",
				num(t), num(t), num(w), num(d), num(int(mo.Int(0, 0))))
			if err != nil {
				return err
			}
			if del.Len() > 0 {
				o := int(del.Int(0, 0))
				if err := s.exec("DELETE FROM order_line%d where ol_w_id=%d AND ol_d_id=%d AND ol_o_id=%d", num(t), num(w), num(d), num(o)); err != nil {
					return err
				}
				if err := s.exec("DELETE FROM orders%d where o_w_id=%d AND o_d_id=%d and o_id=%d", num(t), num(w), num(d), num(o)); err != nil {
					return err
				}
				if err := s.exec("DELETE FROM history%d where h_w_id=%d AND h_d_id=%d LIMIT 10", num(t), num(w), num(d)); err != nil {
					return err
				}
			}
		}
		if err := s.exec("COMMIT"); err != nil {
			return err
		}
	}
	return nil
}
