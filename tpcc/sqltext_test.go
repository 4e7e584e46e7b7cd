package tpcc

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAppendSQLMatchesSprintf checks the statement builder against
// fmt.Sprintf (what the transactions used, and what string.format
// does for these verbs) on the transactions' verbs and random values,
// negative and wide ones included.
func TestAppendSQLMatchesSprintf(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ints := func() int {
		switch r.IntN(4) {
		case 0:
			return r.IntN(10)
		case 1:
			return -r.IntN(1000)
		default:
			return r.IntN(1 << 40)
		}
	}
	for range 2000 {
		a, b, c := ints(), ints(), ints()
		f := (r.Float64() - 0.5) * 1e7
		s := fmt.Sprintf("x%dy", r.IntN(100))
		cases := []struct {
			got, want string
		}{
			{string(appendSQL(nil, "SELECT s_dist_%02d FROM stock%d WHERE s_i_id = %d", num(a), num(b), num(c))),
				fmt.Sprintf("SELECT s_dist_%02d FROM stock%d WHERE s_i_id = %d", a, b, c)},
			{string(appendSQL(nil, "UPDATE c SET c_balance=%f, y=%f WHERE id=%d AND last='%s'", flt(f), flt(-f/3), num(a), text(s))),
				fmt.Sprintf("UPDATE c SET c_balance=%f, y=%f WHERE id=%d AND last='%s'", f, -f/3, a, s)},
			{string(appendSQL(nil, "VALUES (%d,'%s') 100%%", num(a), textBytes([]byte(s)))),
				fmt.Sprintf("VALUES (%d,'%s') 100%%", a, s)},
		}
		name := []byte(s + `it's a \ name`[:r.IntN(14)])
		cases = append(cases,
			struct{ got, want string }{string(appendSQL(nil, "VALUES (%d,%s)", num(a), quoted(name))), fmt.Sprintf("VALUES (%d,%s)", a, sqlQuote(string(name)))},
			struct{ got, want string }{string(appendPadded(nil, name, 10)), fmt.Sprintf("%10s", name)})
		for _, c := range cases {
			if c.got != c.want {
				t.Fatalf("appendSQL: %q, fmt: %q", c.got, c.want)
			}
		}
	}
}

// TestAppendSQLAllocates nothing once its buffer has grown: the point of
// it over fmt.Sprintf.
func TestAppendSQLAllocates(t *testing.T) {
	buf := make([]byte, 0, 512)
	n := testing.AllocsPerRun(100, func() {
		buf = appendSQL(buf[:0], "SELECT s_quantity, s_data, s_dist_%02d s_dist FROM stock%d WHERE s_i_id = %d AND s_w_id= %d FOR UPDATE",
			num(7), num(1), num(4242), num(2))
	})
	if n != 0 {
		t.Errorf("%v allocations per statement", n)
	}
}

// sqlQuote quotes s as a string literal (the generated data holds no quote
// or backslash; names from the server might).
func sqlQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}
