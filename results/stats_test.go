package results

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"benchmatrix/record"
)

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}

func TestCellStats(t *testing.T) {
	t.Parallel()
	cells := flushCells()
	cells[0].noise = 0.001 // b1e1/threads=1: steady
	cells[1].noise = 0.15  // b1e1/threads=8: noisy
	r := synthRun(4, 6, cells[:2])
	r.Cells[0].Status, r.Cells[0].Result = record.CellFailed, nil
	stats := CellStats(r)
	if len(stats) != 2 {
		t.Fatalf("%d stats, want 2", len(stats))
	}
	steady, noisy := stats[0], stats[1]
	if steady.Name != "b1e1/threads=1" || steady.N != 5 || steady.Failed != 1 || steady.CIOK || steady.Noisy ||
		math.Abs(steady.MedianTPS-2250) > 10 || steady.CoV > 1 || !math.IsNaN(steady.CILow) {
		t.Errorf("steady cell: %+v", steady)
	}
	if noisy.N != 6 || !noisy.CIOK || !noisy.Noisy || !strings.Contains(noisy.Why, "CoV") ||
		noisy.CILow > noisy.MedianTPS || noisy.CIHigh < noisy.MedianTPS {
		t.Errorf("noisy cell: %+v", noisy)
	}

	// Known values: tps 100, 102, 98, 101, 99, 100 → median 100, CI [98,
	// 102] (x(1), x(6)), CoV = sqrt(2)/100.
	r = synthRun(1, 6, cells[:1])
	for i, tps := range []float64{100, 102, 98, 101, 99, 100} {
		r.Cells[i].Result.Events = int64(tps * 30)
	}
	s := CellStats(r)[0]
	if s.MedianTPS != 100 || s.CILow != 98 || s.CIHigh != 102 || !near(s.CoV, math.Sqrt2, 1e-9) || s.Noisy {
		t.Errorf("known values: %+v", s)
	}
	// A CI reaching 6 % from the median is noisy even with a small CoV.
	for i, tps := range []float64{94, 100, 100, 100, 100, 100} {
		r.Cells[i].Result.Events = int64(tps * 30)
	}
	if s := CellStats(r)[0]; !s.Noisy || !strings.Contains(s.Why, "CI") || s.CoV > 5 {
		t.Errorf("wide CI: %+v", s)
	}

	var buf bytes.Buffer
	if err := WriteCellStats(&buf, synthRun(4, 6, cells[:2])); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "| b1e1/threads=8 |") || !strings.Contains(out, "yes: CoV") {
		t.Errorf("WriteCellStats:\n%s", out)
	}
}
