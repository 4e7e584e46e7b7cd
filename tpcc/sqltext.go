package tpcc

import "strconv"

// The transactions' statements are text with literals, as sysbench-tpcc
// builds them with string.format. appendSQL builds them the same way into
// a buffer the session reuses, without fmt's per-call allocations (the
// argument slice and the boxing of each int): the verbs are the ones the
// statements use, %d, %02d, %f (six decimals, as Lua's and Go's) and %s.

// arg is one argument of appendSQL: an int, a float or text.
type arg struct {
	kind byte // 'd', 'f' or 's'
	i    int64
	f    float64
	s    string
	b    []byte
}

func num(v int) arg          { return arg{kind: 'd', i: int64(v)} }
func flt(v float64) arg      { return arg{kind: 'f', f: v} }
func text(v string) arg      { return arg{kind: 's', s: v} }
func textBytes(v []byte) arg { return arg{kind: 's', b: v} }

// quoted is text written as a string literal, as sqlQuote (sqltext_test.go) writes it.
func quoted(v []byte) arg { return arg{kind: 'q', b: v} }

// appendSQL appends format with its verbs replaced by args in order. A
// verb that does not match its argument's kind writes the argument as its
// kind says (the statements are fixed text, checked by the tests).
func appendSQL(dst []byte, format string, args ...arg) []byte {
	n := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			dst = append(dst, c)
			continue
		}
		i++
		width := 0
		if format[i] == '0' && i+2 < len(format) {
			width = int(format[i+1] - '0')
			i += 2
		}
		if format[i] == '%' || n >= len(args) {
			dst = append(dst, format[i])
			continue
		}
		a := args[n]
		n++
		switch a.kind {
		case 'd':
			if width > 0 && a.i >= 0 {
				for p := digits(a.i); p < width; p++ {
					dst = append(dst, '0')
				}
			}
			dst = strconv.AppendInt(dst, a.i, 10)
		case 'f':
			dst = strconv.AppendFloat(dst, a.f, 'f', 6, 64)
		case 'q':
			dst = append(dst, '\'')
			for _, c := range a.b {
				switch c {
				case '\\':
					dst = append(dst, '\\', '\\')
				case '\'':
					dst = append(dst, '\'', '\'')
				default:
					dst = append(dst, c)
				}
			}
			dst = append(dst, '\'')
		default:
			if a.b != nil {
				dst = append(dst, a.b...)
			} else {
				dst = append(dst, a.s...)
			}
		}
	}
	return dst
}

// appendPadded appends b right-justified in width columns (fmt's %10s).
func appendPadded(dst, b []byte, width int) []byte {
	for n := len(b); n < width; n++ {
		dst = append(dst, ' ')
	}
	return append(dst, b...)
}

// digits is the number of decimal digits of v >= 0.
func digits(v int64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}
