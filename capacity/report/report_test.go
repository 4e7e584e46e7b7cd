package report

import (
	"strings"
	"testing"
)

// A capacity curve's log axes carry labels even when the steps span less
// than a decade (the slow-disk search: 8/s to 32/s had only "10").
func TestLogTicks125LabelsShortRanges(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (logTicks125{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	if got := strings.Join(labels(6, 40), " "); got != "10 20" {
		t.Errorf("6-40: labels %q, want \"10 20\"", got)
	}
	if got := strings.Join(labels(0.5, 300), " "); got != "0.5 1 2 5 10 20 50 100 200" {
		t.Errorf("0.5-300: labels %q", got)
	}
	if got := labels(11, 18); len(got) < 2 {
		t.Errorf("11-18: labels %q, want every digit labelled when 1-2-5 gives fewer than two", got)
	}
	if got := strings.Join(labels(1, 1e6), " "); !strings.Contains(got, "1000") || strings.Contains(got, "2000") {
		t.Errorf("1-1e6: labels %q, want the powers of ten only", got)
	}
}
