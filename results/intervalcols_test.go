package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/results.md's intervals.csv row names every column before the
// sampled metrics (observe's are checked against docs/observing.md), in
// order.
func TestIntervalColumnsDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "docs", "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "| `intervals.csv` |") {
			row = l
		}
	}
	if row == "" {
		t.Fatal("docs/results.md has no intervals.csv row")
	}
	last := -1
	for _, c := range IntervalColumns {
		i := strings.Index(row, "`"+c+"`")
		if i < 0 {
			t.Errorf("docs/results.md's intervals.csv row does not name %s", c)
			continue
		}
		if i < last {
			t.Errorf("docs/results.md's intervals.csv row names %s out of order", c)
		}
		last = i
	}
}
