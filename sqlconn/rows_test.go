package sqlconn

import (
	"database/sql/driver"
	"testing"
)

// TestRowsValues reads back what the driver hands over, per kind, and
// reuses its memory for the next result set.
func TestRowsValues(t *testing.T) {
	var r Rows
	r.reset(4)
	r.add([]driver.Value{int64(42), []byte("0.1250"), nil, float64(2.5)})
	r.add([]driver.Value{uint64(7), []byte("BC"), []byte("-3"), float32(0.5)})
	if r.Len() != 2 {
		t.Fatalf("Len %d", r.Len())
	}
	if r.Int(0, 0) != 42 || r.Float(0, 1) != 0.125 || !r.Null(0, 2) || r.Float(0, 3) != 2.5 || r.Int(0, 3) != 2 {
		t.Errorf("row 0: %d %v %v %v", r.Int(0, 0), r.Float(0, 1), r.Null(0, 2), r.Float(0, 3))
	}
	if r.Int(1, 0) != 7 || r.String(1, 1) != "BC" || r.Int(1, 2) != -3 || r.Float(1, 3) != 0.5 || r.Null(1, 2) {
		t.Errorf("row 1: %d %q %d %v", r.Int(1, 0), r.String(1, 1), r.Int(1, 2), r.Float(1, 3))
	}
	if r.Bytes(0, 2) != nil || r.String(0, 0) != "42" || r.Int(1, 1) != 0 {
		t.Errorf("NULL bytes %q, int as text %q, text as int %d", r.Bytes(0, 2), r.String(0, 0), r.Int(1, 1))
	}
	r.reset(1)
	if r.Len() != 0 {
		t.Errorf("after reset: %d rows", r.Len())
	}
	row1 := []driver.Value{int64(1), []byte("abcdefgh")}
	row2 := []driver.Value{int64(2), []byte("ijklmnop")}
	n := testing.AllocsPerRun(100, func() {
		r.reset(2)
		r.add(row1)
		r.add(row2)
	})
	if n != 0 {
		t.Errorf("%v allocations per result set once grown", n)
	}
}
