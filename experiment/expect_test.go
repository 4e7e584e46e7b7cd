package experiment

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseExpect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		column  string
		terms   string // name*factor, space-separated
		ops     string
		wantErr string
	}{
		{in: "b1e1 < b0e1 < b0e0", column: "tps", terms: "b1e1*1 b0e1*1 b0e0*1", ops: "<<"},
		{in: "b0e0 > 3 * b1e1", column: "tps", terms: "b0e0*1 b1e1*3", ops: ">"},
		{in: "b0e0>b1e1*2.5", column: "tps", terms: "b0e0*1 b1e1*2.5", ops: ">"},
		{in: "lat_p95_ms: b0e0 < b1e1", column: "lat_p95_ms", terms: "b0e0*1 b1e1*1", ops: "<"},
		{in: "b1e1", wantErr: "want an ordering"},
		{in: "b1e1 < ", wantErr: "a side is empty"},
		{in: "-1 * b1e1 < b0e0", wantErr: "positive number"},
		{in: "latency: a < b", wantErr: "unknown column \"latency\""},
		{in: "a b < c", wantErr: "not a scenario or cell name"},
	}
	for _, c := range cases {
		e, err := ParseExpect(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		var terms []string
		for _, tm := range e.Terms {
			terms = append(terms, tm.Name+"*"+fmtF(tm.Factor))
		}
		if e.Column != c.column || strings.Join(terms, " ") != c.terms || strings.Join(e.Ops, "") != c.ops {
			t.Errorf("%q: column %q terms %q ops %q", c.in, e.Column, strings.Join(terms, " "), strings.Join(e.Ops, ""))
		}
	}
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// The new [experiment] keys: every problem with its key and line.
func TestExpectAndStallKeys(t *testing.T) {
	t.Parallel()
	base := "[workload]\nname = \"oltp_insert\"\n[scenarios]\nb1 = { sync_binlog = 1 }\nb0 = { sync_binlog = 0 }\n"
	bad := []struct{ name, exp, want string }{
		{"unknown name", "expect = [\"b1 < b9\"]", "line 2: experiment.expect: \"b1 < b9\": \"b9\" is neither a scenario nor a cell"},
		{"not an ordering", "expect = [\"b1\"]", "line 2: experiment.expect"},
		{"not strings", "expect = [1]", "line 2: experiment.expect: want strings"},
		{"threshold out of range", "stall_threshold = 1.5", "line 2: experiment.stall_threshold"},
		{"bad wait", "wait_quiet = \"soon\"", "line 2: experiment.wait_quiet"},
		{"bad order", "order = \"random\"", "want grouped, written, shuffled or blocked"},
	}
	for _, c := range bad {
		_, err := resolve("m.toml", "[experiment]\n"+c.exp+"\n"+base)
		var me *Error
		if !errors.As(err, &me) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	p, err := resolve("m.toml", "[experiment]\nexpect = [\"b1 < b0\", \"b0 > 2 * b1\"]\nstall_threshold = 0.3\nwait_quiet = \"20s\"\nrepeats = 3\norder = \"blocked\"\n"+base)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Manifest
	if len(m.Expect) != 2 || m.StallThreshold != 0.3 || m.WaitQuiet.Seconds() != 20 {
		t.Errorf("decoded %+v %v %v", m.Expect, m.StallThreshold, m.WaitQuiet)
	}
	// Blocked: all repeats of a cell back to back.
	var got []string
	for _, c := range p.Cells {
		got = append(got, c.Name+"#"+string(rune('0'+c.Repeat)))
	}
	first := p.Cells[0].Name
	want := []string{first + "#1", first + "#2", first + "#3"}
	if strings.Join(got[:3], " ") != strings.Join(want, " ") || len(got) != 6 {
		t.Errorf("blocked order: %v", got)
	}
}
