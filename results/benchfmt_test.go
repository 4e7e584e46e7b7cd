package results

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"benchmatrix/record"
)

// The export must be valid Go benchmark format: benchfmt (what benchstat
// reads with) parses every line, sees every successful repeat with its
// sub-name keys, values and units, and the unit directions.
func TestWriteBenchFormatParses(t *testing.T) {
	t.Parallel()
	r := synthRun(1, 3, flushCells())
	r.Cells[0].Status, r.Cells[0].Result = record.CellFailed, nil // left out
	var buf bytes.Buffer
	if err := WriteBenchFormat(&buf, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"goos: linux\n", "cpu: AMD EPYC 7B13\n", "experiment: flush\n",
		"server: mariadb 10.11.6-MariaDB-0+deb12u1\n", "workload: oltp_insert\n", "oltp-engine: " + EngineVersion + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}

	rd := benchfmt.NewReader(strings.NewReader(out), "run.txt")
	type key struct{ scenario, threads string }
	seen := map[key]int{}
	n := 0
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("syntax error: %v", rec)
		case *benchfmt.Result:
			n++
			base, parts := rec.Name.Parts()
			if string(base) != "Matrix" || len(parts) != 2 {
				t.Fatalf("name %q: base %q, %d parts", rec.Name, base, len(parts))
			}
			k := key{strings.TrimPrefix(string(parts[0]), "/scenario="), strings.TrimPrefix(string(parts[1]), "/threads=")}
			seen[k]++
			if rec.GetConfig("workload") != "oltp_insert" || rec.GetConfig("experiment") != "flush" {
				t.Errorf("%s: config %v", rec.Name, rec.Config)
			}
			tps, ok1 := rec.Value("tps")
			p99, ok2 := rec.Value("p99-ms")
			if !ok1 || !ok2 || tps <= 0 || p99 <= 0 || rec.Iters != int(tps*30+0.5) {
				t.Errorf("%s: iters %d, values %+v", rec.Name, rec.Iters, rec.Values)
			}
			// ns/txn is tidied to sec/txn by the reader.
			if sec, ok := rec.Value("sec/txn"); !ok || math.Abs(sec*tps-1) > 1e-3 {
				t.Errorf("%s: sec/txn %v (%v) with tps %v", rec.Name, sec, ok, tps)
			}
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 17 || seen[key{"b1e1", "1"}] != 2 || seen[key{"b0e0", "8"}] != 3 {
		t.Errorf("%d results, by cell %v; want 17 (18 repeats, one failed)", n, seen)
	}
	units := rd.Units()
	for unit, better := range map[string]string{"tps": "higher", "qps": "higher", "p95-ms": "lower", "sec/txn": "lower"} {
		if m := units.Get(unit, "better"); m == nil || m.Value != better {
			t.Errorf("unit %s better=%v, want %s", unit, m, better)
		}
	}
}

func TestBenchName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, scenario, want string
	}{
		{"b1e1/threads=8", "b1e1", "BenchmarkMatrix/scenario=b1e1/threads=8"},
		{"b1e1", "b1e1", "BenchmarkMatrix/scenario=b1e1"},
		{"threads=8/engine=innodb", "", "BenchmarkMatrix/threads=8/engine=innodb"},
		{"default", "", "BenchmarkMatrix/cell=default"},
		{"my cell", "", "BenchmarkMatrix/cell=my_cell"},
		{"b1e1/range=10-20", "b1e1", "BenchmarkMatrix/scenario=b1e1/range=10_20"},
	}
	for _, c := range cases {
		if got := BenchName(&record.Cell{Name: c.name, Scenario: c.scenario}); got != c.want {
			t.Errorf("BenchName(%q, %q) = %q, want %q", c.name, c.scenario, got, c.want)
		}
	}
}
