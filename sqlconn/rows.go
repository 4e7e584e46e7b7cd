package sqlconn

import (
	"database/sql/driver"
	"fmt"
	"strconv"
	"time"
)

// Rows is a result set read into memory that the next QueryRows into it
// reuses: a workload that reads what the server answered (tpcc's
// d_next_o_id, prices, names) does so without an allocation per row or
// per value. The driver hands text-protocol integers and doubles over
// converted, everything else as bytes.
type Rows struct {
	ncols int
	vals  []value // row-major
	arena []byte  // the bytes values, back to back
}

type kind uint8

const (
	kindNull kind = iota
	kindInt
	kindFloat
	kindBytes
)

type value struct {
	kind   kind
	i      int64
	f      float64
	off, n int
}

func (r *Rows) reset(ncols int) {
	r.ncols = ncols
	r.vals = r.vals[:0]
	r.arena = r.arena[:0]
}

func (r *Rows) add(dest []driver.Value) {
	for _, d := range dest {
		var v value
		switch x := d.(type) {
		case nil:
		case int64:
			v = value{kind: kindInt, i: x}
		case uint64:
			v = value{kind: kindInt, i: int64(x)}
		case float64:
			v = value{kind: kindFloat, f: x}
		case float32:
			v = value{kind: kindFloat, f: float64(x)}
		case []byte:
			v = r.bytes(x)
		case time.Time:
			v = r.bytes(x.AppendFormat(nil, time.DateTime))
		default:
			v = r.bytes(fmt.Append(nil, x))
		}
		r.vals = append(r.vals, v)
	}
}

func (r *Rows) bytes(b []byte) value {
	v := value{kind: kindBytes, off: len(r.arena), n: len(b)}
	r.arena = append(r.arena, b...)
	return v
}

// Len is the number of rows.
func (r *Rows) Len() int {
	if r.ncols == 0 {
		return 0
	}
	return len(r.vals) / r.ncols
}

func (r *Rows) at(row, col int) *value { return &r.vals[row*r.ncols+col] }

// Null tells whether the value at row, col is NULL.
func (r *Rows) Null(row, col int) bool { return r.at(row, col).kind == kindNull }

// Bytes is the value at row, col as the server sent it (integers and
// doubles formatted again), valid until the next query into r; nil for
// NULL.
func (r *Rows) Bytes(row, col int) []byte {
	v := r.at(row, col)
	switch v.kind {
	case kindBytes:
		return r.arena[v.off : v.off+v.n : v.off+v.n]
	case kindInt:
		return strconv.AppendInt(nil, v.i, 10)
	case kindFloat:
		return strconv.AppendFloat(nil, v.f, 'g', -1, 64)
	}
	return nil
}

// String is Bytes as a string ("" for NULL).
func (r *Rows) String(row, col int) string { return string(r.Bytes(row, col)) }

// Int is the value at row, col as an integer: 0 for NULL or a value that
// is not one (as Lua's tonumber would leave it nil and the arithmetic 0
// is what the workloads need then).
func (r *Rows) Int(row, col int) int64 {
	v := r.at(row, col)
	switch v.kind {
	case kindInt:
		return v.i
	case kindFloat:
		return int64(v.f)
	case kindBytes:
		n, _ := strconv.ParseInt(string(r.arena[v.off:v.off+v.n]), 10, 64)
		return n
	}
	return 0
}

// Float is the value at row, col as a float (DECIMAL columns come as
// text): 0 for NULL or a value that is not a number.
func (r *Rows) Float(row, col int) float64 {
	v := r.at(row, col)
	switch v.kind {
	case kindInt:
		return float64(v.i)
	case kindFloat:
		return v.f
	case kindBytes:
		f, _ := strconv.ParseFloat(string(r.arena[v.off:v.off+v.n]), 64)
		return f
	}
	return 0
}
