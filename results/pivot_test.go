package results

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"benchmatrix/engine"
	"benchmatrix/experiment"
	"benchmatrix/record"
)

func pivotRun(pivot string) *record.Run {
	r := &record.Run{Experiment: "p", Baseline: "a", Axes: []string{"threads"}, Pivot: pivot, Columns: []string{"sync_binlog", "threads"}}
	for _, sc := range []struct{ name, sb string }{{"a", "1"}, {"b", "0"}} {
		for i, th := range []string{"1", "8"} {
			events := int64(100 * (i + 1))
			if sc.name == "b" {
				events *= 2
			}
			r.Cells = append(r.Cells, record.Cell{Name: sc.name + "/threads=" + th, Scenario: sc.name, Repeat: 1, Status: record.CellOK,
				Params: []experiment.Param{{Name: "sync_binlog", Value: sc.sb}, {Name: "threads", Value: th}},
				Result: &engine.Result{Events: events, Elapsed: time.Second}})
		}
	}
	return r
}

func TestPivot(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := writePivot(&b, pivotRun("")); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	// Default: scenarios as columns, the axis as rows, ratios to the baseline.
	for _, want := range []string{"### tps by scenario", "| threads=1 |", "200.0 (2.00x)", "| threads=8 |", "400.0 (2.00x)"} {
		if !strings.Contains(got, want) {
			t.Errorf("default pivot lacks %q:\n%s", want, got)
		}
	}
	b.Reset()
	if err := writePivot(&b, pivotRun("threads")); err != nil {
		t.Fatal(err)
	}
	got = b.String()
	for _, want := range []string{"### tps by threads", "| a ", "| b ", "100.0", "400.0"} {
		if !strings.Contains(got, want) {
			t.Errorf("pivot on threads lacks %q:\n%s", want, got)
		}
	}
}
