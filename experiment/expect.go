package experiment

import (
	"fmt"
	"strconv"
	"strings"

	"benchmatrix/record"
)

// Expectation is one entry of [experiment] expect: an ordering of
// scenarios (or cells) on one result column, e.g. "b1e1 < b0e1 < b0e0" or
// "b0e0 > 3 * b1e1", optionally prefixed by the column:
// "lat_p95_ms: b0e0 < b1e1". The column is tps when none is given.
type Expectation struct {
	Text   string       `json:"text"`
	Column string       `json:"column"`
	Terms  []ExpectTerm `json:"terms"`
	// Ops[i] is "<" or ">" between Terms[i] and Terms[i+1].
	Ops []string `json:"ops"`
}

// ExpectTerm is a scenario or cell name with a positive factor (1 unless
// written as "3 * name" or "name * 3").
type ExpectTerm struct {
	Factor float64 `json:"factor"`
	Name   string  `json:"name"`
}

// ExpectColumns are the result columns an expectation may compare: the
// figures of cells.csv marked Expect in record.Columns.
var ExpectColumns = record.ColumnNames(func(c record.Column) bool { return c.Expect })

// ParseExpect parses one expectation.
func ParseExpect(s string) (Expectation, error) {
	e := Expectation{Text: s, Column: "tps"}
	body := s
	if col, rest, ok := strings.Cut(s, ":"); ok {
		e.Column, body = strings.TrimSpace(col), rest
		known := false
		for _, c := range ExpectColumns {
			known = known || c == e.Column
		}
		if !known {
			return e, fmt.Errorf("%q: unknown column %q (known: %s)", s, e.Column, strings.Join(ExpectColumns, ", "))
		}
	}
	var parts []string
	start := 0
	for i, r := range body {
		if r == '<' || r == '>' {
			parts = append(parts, body[start:i])
			e.Ops = append(e.Ops, string(r))
			start = i + 1
		}
	}
	parts = append(parts, body[start:])
	if len(e.Ops) == 0 {
		return e, fmt.Errorf("%q: want an ordering such as \"b1e1 < b0e1 < b0e0\" or \"b0e0 > 3 * b1e1\"", s)
	}
	for _, p := range parts {
		t, err := parseTerm(p)
		if err != nil {
			return e, fmt.Errorf("%q: %v", s, err)
		}
		e.Terms = append(e.Terms, t)
	}
	if err := termColumns(&e); err != nil { // slo.go
		return e, fmt.Errorf("%q: %v", s, err)
	}
	return e, nil
}

func parseTerm(p string) (ExpectTerm, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return ExpectTerm{}, fmt.Errorf("a side is empty")
	}
	t := ExpectTerm{Factor: 1, Name: p}
	if a, b, ok := strings.Cut(p, "*"); ok {
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		f, err := strconv.ParseFloat(a, 64)
		name := b
		if err != nil {
			f, err = strconv.ParseFloat(b, 64)
			name = a
		}
		if err != nil || !(f > 0) || f > 1e9 {
			return t, fmt.Errorf("%q: want a positive number times a name, e.g. \"3 * b1e1\"", p)
		}
		t.Factor, t.Name = f, name
	}
	if t.Name == "" || strings.ContainsAny(t.Name, " \t*") {
		return t, fmt.Errorf("%q is not a scenario or cell name", p)
	}
	return t, nil
}

// expect decodes [experiment] expect: a string or an array of strings,
// each parsed here; the names they use are checked against the plan.
func (d *decoder) expect(key string, v any, m *Manifest) {
	var list []string
	switch x := v.(type) {
	case string:
		list = []string{x}
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				d.problem(key, "want strings such as \"b1e1 < b0e1\", got a %s", typeName(e))
				continue
			}
			list = append(list, s)
		}
	default:
		d.problem(key, "want an array of strings such as [\"b1e1 < b0e1 < b0e0\"], got a %s", typeName(v))
		return
	}
	for _, s := range list {
		if _, err := ParseExpect(s); err != nil {
			d.problem(key, "%v", err)
			continue
		}
		m.Expect = append(m.Expect, s)
	}
}

// validateExpect checks that every name an expectation uses is a scenario
// or a cell of the plan.
func (d *decoder) validateExpect(m *Manifest, plan *Plan) {
	known := map[string]bool{}
	var scen []string
	for _, sc := range m.Scenarios {
		known[sc.Name] = true
		scen = append(scen, sc.Name)
	}
	for _, c := range plan.Cells {
		known[c.Name] = true
	}
	for _, s := range m.Expect {
		e, err := ParseExpect(s)
		if err != nil {
			continue // reported when decoding
		}
		for _, t := range e.Terms {
			if !known[t.Name] {
				d.problem("experiment.expect", "%q: %q is neither a scenario nor a cell (scenarios: %s)", s, t.Name, strings.Join(scen, ", "))
			}
		}
	}
}
