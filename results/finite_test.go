package results

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"benchmatrix/engine"
	"benchmatrix/oltp"
	"benchmatrix/record"
)

// fill gives every float reachable from v the value x: it allocates nil
// pointers, makes slices and arrays of one element and maps of one entry,
// down to depth levels (the plan's types refer to each other). It returns
// how many floats JSON writes (outside `json:"-"` fields) it set.
func fill(v reflect.Value, x float64, depth int, visible bool) int {
	if depth == 0 {
		return 0
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		v.SetFloat(x)
		if visible {
			return 1
		}
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return fill(v.Elem(), x, depth-1, visible)
	case reflect.Struct:
		n := 0
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			n += fill(v.Field(i), x, depth-1, visible && sf.Tag.Get("json") != "-")
		}
		return n
	case reflect.Slice:
		if v.Len() == 0 {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		}
		return fill(v.Index(0), x, depth-1, visible)
	case reflect.Array:
		n := 0
		for i := 0; i < v.Len(); i++ {
			n += fill(v.Index(i), x, depth-1, visible)
		}
		return n
	case reflect.Interface:
		// An engine's options in a workload: fill a copy and put it back.
		if v.IsNil() {
			return 0
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		n := fill(c, x, depth-1, visible)
		v.Set(c)
		return n
	case reflect.Map:
		k := reflect.New(v.Type().Key()).Elem()
		if k.Kind() == reflect.String {
			k.SetString("k")
		}
		e := reflect.New(v.Type().Elem()).Elem()
		n := fill(e, x, depth-1, visible)
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(k, e)
		v.Set(m)
		return n
	}
	return 0
}

// A value JSON cannot carry, anywhere in the record, never fails the
// write: run.json is written and reads back, every such value is named in
// the notes, and the CSVs hold no NaN or Inf (a server frozen in the
// warm-up crashed a run with "json: unsupported value: NaN").
func TestNonFiniteValuesAreWritten(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		t.Run(strings.ToLower(strings.TrimPrefix(fmtFloat(x), "+")), func(t *testing.T) {
			// The workloads hold an engine's options.
			r := record.Run{Cells: []record.Cell{{Workload: engine.Spec{Engine: "oltp", Options: oltp.DefaultOptions()}}},
				Plan: []record.PlanCell{{Workload: engine.Spec{Engine: "oltp", Options: oltp.DefaultOptions()}}}}
			n := fill(reflect.ValueOf(&r).Elem(), x, 12, true)
			t.Logf("%d floats reachable from Run", n)
			if n < 50 {
				t.Fatalf("only %d floats reachable from Run: the filler misses the record's fields", n)
			}
			c := &r.Cells[0]
			c.Name, c.Status, c.Repeat = "b1e1", record.CellOK, 1
			r.Notes = nil

			dir := filepath.Join(t.TempDir(), "run")
			w, err := Create(dir, []string{"threads"}, []string{"m"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := w.AppendCell(c); err != nil {
				t.Fatal(err)
			}
			if err := w.WriteRun(&r); err != nil {
				t.Fatalf("WriteRun with %v in every float: %v", x, err)
			}
			if len(r.Notes) != n {
				t.Errorf("%d notes for %d values that cannot be written; first notes: %q", len(r.Notes), n, r.Notes[:min(3, len(r.Notes))])
			}
			back, err := ReadRun(dir)
			if err != nil {
				t.Fatalf("run.json does not read back: %v", err)
			}
			if len(back.Cells) != 1 || back.Cells[0].Name != "b1e1" || len(back.Notes) != n {
				t.Errorf("read back %d cells, %d notes; want 1 cell b1e1 and %d notes", len(back.Cells), len(back.Notes), n)
			}
			if back.Cells[0].Result == nil || back.Cells[0].Result.Latency.P95 != 0 {
				t.Errorf("a non-finite p95 reads back as %+v, want 0", back.Cells[0].Result)
			}
			// Writing again finds nothing new.
			if err := w.WriteRun(&r); err != nil || len(r.Notes) != n {
				t.Errorf("second write: %v, %d notes (want %d)", err, len(r.Notes), n)
			}
			for _, f := range []string{CellsFile, IntervalsFile} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				if s := strings.ToLower(string(b)); strings.Contains(s, "nan") || strings.Contains(s, "inf") {
					t.Errorf("%s holds a non-finite value:\n%s", f, b)
				}
				if lines := strings.Count(string(b), "\n"); lines < 2 {
					t.Errorf("%s has %d lines, want the header and the cell's row", f, lines)
				}
			}
		})
	}
}

func fmtFloat(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case x > 0:
		return "+Inf"
	}
	return "-Inf"
}
